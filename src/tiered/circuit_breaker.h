#pragma once
// CircuitBreaker: stops hammering a remote store that is down. Closed: calls pass; after
// `failure_threshold` consecutive health failures (kUnavailable, kTimeout, kIoError) it opens.
// Open: calls fail fast with kUnavailable for `open_duration`, then the next call is let through
// as a half-open probe (others still fail fast). The probe's success closes the breaker; its
// failure re-opens it for another open_duration. Answers such as kNotFound or kAlreadyExists come
// from a healthy store and count as success. Transitions are reported to `on_transition` (called
// without internal locks held) and in counters(). Thread-safe.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "base/clock.h"
#include "tiered/remote_storage.h"
#include "tiered/storage_metrics.h"

namespace strata::tiered {

struct BreakerOptions {
  int failure_threshold = 5;
  std::chrono::milliseconds open_duration{5000};
  Clock* clock = nullptr;  // null = Clock::Real()
  std::function<void(BreakerState from, BreakerState to)> on_transition;
};

class CircuitBreaker final : public RemoteStorage {
 public:
  CircuitBreaker(std::unique_ptr<RemoteStorage> inner, BreakerOptions options);

  BreakerState state() const;
  BreakerCounters counters() const;

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
  enum class Admission { kReject, kNormal, kProbe };
  Admission Admit();
  // Records a finished call; `code` is its Errc (kOk on success).
  void Record(Admission how, Errc code, const std::string& message);
  void SetState(BreakerState to, std::vector<std::pair<BreakerState, BreakerState>>* changes);
  void Notify(const std::vector<std::pair<BreakerState, BreakerState>>& changes);
  template <typename Fn>
  auto Guard(Fn&& fn) -> decltype(fn());

  std::unique_ptr<RemoteStorage> inner_;
  BreakerOptions opts_;
  Clock* clock_;
  mutable std::mutex mu_;
  BreakerState state_ = BreakerState::kClosed;  // guarded by mu_
  int consecutive_failures_ = 0;                // guarded by mu_
  int64_t opened_at_ms_ = 0;                    // guarded by mu_
  bool probe_in_flight_ = false;                // guarded by mu_
  std::string last_error_;                      // guarded by mu_
  std::atomic<uint64_t> calls_{0}, failures_{0}, rejected_{0}, opened_{0}, half_opened_{0},
      closed_{0};
};

}  // namespace strata::tiered
