#pragma once
// RetryingStorage: retries calls that failed with a retriable error (kUnavailable, kTimeout,
// kIoError) with exponential backoff and full jitter (sleep uniform in [0, min(cap, base*m^n)]),
// within the call's deadline (CallOptions::timeout, or RetryOptions::call_timeout). Each attempt
// gets at most attempt_timeout. Every operation is safe to repeat: Put uploads to a fresh
// temporary each time, Delete is idempotent, and a repeated Rename whose first attempt took effect
// (src gone, dst present) counts as success. Thread-safe.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <random>

#include "base/clock.h"
#include "tiered/remote_storage.h"
#include "tiered/storage_metrics.h"

namespace strata::tiered {

struct RetryOptions {
  int max_attempts = 6;
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  double multiplier = 2.0;
  std::chrono::milliseconds attempt_timeout{30000};  // 0 = the call's remaining time
  std::chrono::milliseconds call_timeout{120000};    // when CallOptions::timeout is 0
  uint64_t seed = 0;                                 // jitter; 0 = random
  Clock* clock = nullptr;                            // deadlines; null = Clock::Real()
  // Waits between attempts; returns false if cancelled. Null = a real, cancellable sleep.
  std::function<bool(std::chrono::milliseconds, const CancelFlag&)> sleep;
};

class RetryingStorage final : public RemoteStorage {
 public:
  RetryingStorage(std::unique_ptr<RemoteStorage> inner, RetryOptions options);

  RetryCounters counters() const;

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
  // Runs attempt(call_options) until success, a non-retriable error, max_attempts, or deadline.
  // `recovered(err, attempt)` may turn a later attempt's error into success (Rename).
  template <typename Fn>
  auto Run(const CallOptions& opts, Fn&& attempt,
           const std::function<bool(const Error&, int)>& recovered = {}) -> decltype(attempt(opts));
  std::chrono::milliseconds Backoff(int retry);

  std::unique_ptr<RemoteStorage> inner_;
  RetryOptions opts_;
  Clock* clock_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;  // guarded by rng_mu_
  std::atomic<uint64_t> calls_{0}, attempts_{0}, retries_{0}, failures_{0}, exhausted_{0};
};

}  // namespace strata::tiered
