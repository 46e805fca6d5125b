#pragma once
// FaultInjectingStorage: a test decorator that delays or fails a configurable share of calls per
// operation type. Decisions come from one seeded generator, so a single-threaded call sequence
// is reproducible. Delays end early (kShuttingDown) when the call is cancelled, so a hedged
// read's loser does not linger. Faults can be changed at any time (e.g. to simulate an outage).
// Thread-safe.
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <random>

#include "tiered/remote_storage.h"
#include "tiered/storage_metrics.h"

namespace strata::tiered {

enum class StorageOp { kPut = 0, kGet, kStat, kList, kDelete, kMkDirs, kRename };
inline constexpr size_t kStorageOpCount = 7;
const char* StorageOpName(StorageOp op);

struct FaultSpec {
  double fail_ratio = 0;  // share of calls that fail
  Errc fail_code = Errc::kUnavailable;
  // When true the wrapped call runs first and its result is replaced by the failure: the caller
  // cannot tell whether the operation happened (a lost reply).
  bool fail_after_call = false;
  double delay_ratio = 0;  // share of calls delayed by `delay` before running
  std::chrono::milliseconds delay{0};
};

class FaultInjectingStorage final : public RemoteStorage {
 public:
  FaultInjectingStorage(std::unique_ptr<RemoteStorage> inner, uint64_t seed);

  void SetFault(StorageOp op, const FaultSpec& spec);
  void SetAllFaults(const FaultSpec& spec);
  FaultCounters counters() const;

  using RemoteStorage::Delete;
  using RemoteStorage::Get;
  using RemoteStorage::List;
  using RemoteStorage::MkDirs;
  using RemoteStorage::Put;
  using RemoteStorage::Rename;
  using RemoteStorage::Stat;

  Status Put(std::string_view path, const PutSource& src, const CallOptions& opts) override;
  Result<Bytes> Get(std::string_view path, uint64_t offset, uint64_t length,
                    const CallOptions& opts) override;
  Result<ObjectInfo> Stat(std::string_view path, const CallOptions& opts) override;
  Result<std::vector<ObjectInfo>> List(std::string_view dir, const CallOptions& opts) override;
  Status Delete(std::string_view path, bool recursive, const CallOptions& opts) override;
  Status MkDirs(std::string_view path, const CallOptions& opts) override;
  Status Rename(std::string_view src, std::string_view dst, const CallOptions& opts) override;

 private:
  struct Decision {
    bool fail = false;
    bool delay = false;
    FaultSpec spec;
  };
  Decision Decide(StorageOp op);
  // Runs fn() with the decided delay/failure around it.
  template <typename Fn>
  auto Run(StorageOp op, const CallOptions& opts, Fn&& fn) -> decltype(fn());

  std::unique_ptr<RemoteStorage> inner_;
  mutable std::mutex mu_;
  std::mt19937_64 rng_;                              // guarded by mu_
  std::array<FaultSpec, kStorageOpCount> faults_{};  // guarded by mu_
  std::atomic<uint64_t> calls_{0}, failures_{0}, delays_{0};
};

// Sleeps up to `d`, returning false early if `cancel` is set (polled every few ms).
bool SleepUnlessCancelled(std::chrono::milliseconds d, const CancelFlag& cancel);

}  // namespace strata::tiered
