#pragma once
// TierFixture: a TieredPartition over TieredLogTest's log and a file://
// store behind a switchable failing layer, with the TierContext the
// copier and retention tests build their class under test on.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "tiered/tier_context.h"
#include "tiered/tiered_log_test_util.h"
#include "tiered/tiered_partition.h"

namespace strata::tiered::testing {

// Fails Puts and Deletes whose path contains `part` (any path when empty)
// while `fail` is set, counting them.
class SwitchableStorage : public ForwardingStorage {
 public:
  using ForwardingStorage::ForwardingStorage;
  using RemoteStorage::Delete;
  using RemoteStorage::Put;
  Status Put(std::string_view p, const PutSource& s, const CallOptions& o) override {
    if (Fails(p)) return MakeError(Errc::kUnavailable, "injected put failure");
    return inner_->Put(p, s, o);
  }
  Status Delete(std::string_view p, bool r, const CallOptions& o) override {
    if (Fails(p)) return MakeError(Errc::kUnavailable, "injected delete failure");
    return inner_->Delete(p, r, o);
  }
  std::atomic<bool> fail{false};
  std::string part;  // set before the store is used
  std::atomic<int> failures{0};

 private:
  bool Fails(std::string_view p) {
    if (!fail.load() || p.find(part) == std::string_view::npos) return false;
    failures.fetch_add(1);
    return true;
  }
};

class TierFixture : public TieredLogTest {
 protected:
  void SetUp() override {
    OpenLog();
    backend_ = FileStore();
    store_ = std::make_unique<SwitchableStorage>(backend_.get());
    options_ = FastOptions();
    ctx_ = TierContext{store_.get(), nullptr, Clock::Real(), &options_, &counters_};
  }

  // The partition, registered as a single broker's leader whose committed
  // end is `committed_` (the log end until a test lowers it).
  std::shared_ptr<TieredPartition> Partition(bool reader = false) {
    auto p = std::make_shared<TieredPartition>(id_, ctx_);
    std::lock_guard lock(p->mu);
    p->ConfigureLocked(
        log_, config_, [this] { return std::min(committed_.load(), log_->log_end_offset()); },
        kNoLeaderEpoch, reader);
    return p;
  }

  // Calls `round` (under p's mutex) every few ms until `done` (also under
  // it) or `timeout_ms` passes; returns whether it got there.
  static bool Until(TieredPartition& p, const std::function<void()>& round,
                    const std::function<bool()>& done, int64_t timeout_ms = 30000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      {
        std::lock_guard lock(p.mu);
        round();
        if (done()) return true;
      }
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  std::unique_ptr<RemoteStorage> backend_;
  std::unique_ptr<SwitchableStorage> store_;
  RemoteLogManagerOptions options_;
  TierCounters counters_;
  TierContext ctx_;
  std::atomic<Offset> committed_{Offset::Max()};
};

}  // namespace strata::tiered::testing
