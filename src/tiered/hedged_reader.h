#pragma once
// HedgedReader: cuts the slow tail of Get. A read runs on a background thread; if it has not
// answered within `threshold`, a second identical read starts, asking the store to avoid the node
// the first one went to (WebHDFS: excludedatanodes with the first read's DataNode). The first
// successful answer wins; the other read is cancelled and its result dropped. An error from one
// read waits for the other. A token bucket caps hedges at `max_hedge_ratio` of reads so a store
// that is slow everywhere is not hit with double load. Other operations pass straight through.
// Thread-safe; the destructor waits for abandoned reads to finish (they are cancelled).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "tiered/remote_storage.h"
#include "tiered/storage_metrics.h"

namespace strata::tiered {

struct HedgeOptions {
  std::chrono::milliseconds threshold{200};
  double max_hedge_ratio = 0.1;   // tokens earned per read; a hedge costs one
  double max_burst = 10;          // token bucket size (also the initial fill)
  int max_background_reads = 64;  // no hedge while this many reads are in flight
};

class HedgedReader final : public RemoteStorage {
 public:
  HedgedReader(std::unique_ptr<RemoteStorage> inner, HedgeOptions options);
  ~HedgedReader() override;

  HedgeCounters counters() const;

  using RemoteStorage::Delete;
  using RemoteStorage::Get;
  using RemoteStorage::List;
  using RemoteStorage::MkDirs;
  using RemoteStorage::Put;
  using RemoteStorage::Rename;
  using RemoteStorage::Stat;

  Result<Bytes> Get(std::string_view path, uint64_t offset, uint64_t length,
                    const CallOptions& opts) override;
  Status Put(std::string_view path, const PutSource& src, const CallOptions& opts) override {
    return inner_->Put(path, src, opts);
  }
  Result<ObjectInfo> Stat(std::string_view path, const CallOptions& opts) override {
    return inner_->Stat(path, opts);
  }
  Result<std::vector<ObjectInfo>> List(std::string_view dir, const CallOptions& opts) override {
    return inner_->List(dir, opts);
  }
  Status Delete(std::string_view path, bool recursive, const CallOptions& opts) override {
    return inner_->Delete(path, recursive, opts);
  }
  Status MkDirs(std::string_view path, const CallOptions& opts) override {
    return inner_->MkDirs(path, opts);
  }
  Status Rename(std::string_view src, std::string_view dst, const CallOptions& opts) override {
    return inner_->Rename(src, dst, opts);
  }

 private:
  struct Race;
  struct Tracker {  // background reads still running; shared with them
    std::mutex mu;
    std::condition_variable cv;
    int running = 0;
  };

  // Starts read `slot` of the race on a new thread; false if no thread could be started.
  bool Launch(const std::shared_ptr<Race>& race, int slot, CallOptions opts);
  bool TakeHedgeToken();

  std::unique_ptr<RemoteStorage> inner_;
  HedgeOptions opts_;
  std::shared_ptr<Tracker> tracker_ = std::make_shared<Tracker>();
  std::mutex bucket_mu_;
  double tokens_;  // guarded by bucket_mu_
  std::atomic<uint64_t> reads_{0}, fired_{0}, won_{0}, skipped_{0}, failures_{0};
};

}  // namespace strata::tiered
