#include "tiered/retrying_storage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "tiered/fault_injecting_storage.h"

namespace strata::tiered {

using std::chrono::milliseconds;

RetryingStorage::RetryingStorage(std::unique_ptr<RemoteStorage> inner, RetryOptions options)
    : inner_(std::move(inner)),
      opts_(std::move(options)),
      clock_(opts_.clock ? opts_.clock : Clock::Real()),
      rng_(opts_.seed ? opts_.seed : std::random_device{}()) {
  opts_.max_attempts = std::max(1, opts_.max_attempts);
  if (!opts_.sleep) opts_.sleep = SleepUnlessCancelled;
}

RetryCounters RetryingStorage::counters() const {
  return RetryCounters{calls_.load(), attempts_.load(), retries_.load(), failures_.load(),
                       exhausted_.load()};
}

milliseconds RetryingStorage::Backoff(int retry) {
  double cap =
      std::min(double(opts_.max_backoff.count()),
               double(opts_.initial_backoff.count()) * std::pow(opts_.multiplier, retry - 1));
  std::lock_guard lock(rng_mu_);
  std::uniform_real_distribution<double> u(0.0, std::max(0.0, cap));
  return milliseconds(int64_t(u(rng_)));
}

template <typename Fn>
auto RetryingStorage::Run(const CallOptions& opts, Fn&& attempt,
                          const std::function<bool(const Error&, int)>& recovered)
    -> decltype(attempt(opts)) {
  calls_.fetch_add(1, std::memory_order_relaxed);
  milliseconds budget = opts.timeout.count() > 0 ? opts.timeout : opts_.call_timeout;
  const int64_t deadline = clock_->MonotonicMs() + budget.count();
  CallOptions each = opts;
  for (int n = 1;; ++n) {
    milliseconds left(deadline - clock_->MonotonicMs());
    each.timeout = opts_.attempt_timeout.count() > 0 ? std::min(left, opts_.attempt_timeout) : left;
    attempts_.fetch_add(1, std::memory_order_relaxed);
    if (n > 1) retries_.fetch_add(1, std::memory_order_relaxed);
    auto result = attempt(each);
    if (result.ok()) return result;
    if constexpr (std::is_same_v<decltype(attempt(opts)), Status>) {
      if (n > 1 && recovered && recovered(result.error(), n)) return Status::Ok();
    }
    bool retriable = IsRetriable(result.error().code);
    if (!retriable || opts.cancelled() || n >= opts_.max_attempts) {
      failures_.fetch_add(1, std::memory_order_relaxed);
      if (retriable) exhausted_.fetch_add(1, std::memory_order_relaxed);
      return result;
    }
    milliseconds pause = Backoff(n);
    if (clock_->MonotonicMs() + pause.count() >= deadline || !opts_.sleep(pause, opts.cancel)) {
      failures_.fetch_add(1, std::memory_order_relaxed);
      exhausted_.fetch_add(1, std::memory_order_relaxed);
      return result;  // the deadline would pass (or the caller cancelled) while backing off
    }
  }
}

Status RetryingStorage::Put(std::string_view path, const PutSource& src, const CallOptions& opts) {
  return Run(opts, [&](const CallOptions& o) { return inner_->Put(path, src, o); });
}

Result<Bytes> RetryingStorage::Get(std::string_view path, uint64_t offset, uint64_t length,
                                   const CallOptions& opts) {
  return Run(opts, [&](const CallOptions& o) { return inner_->Get(path, offset, length, o); });
}

Result<ObjectInfo> RetryingStorage::Stat(std::string_view path, const CallOptions& opts) {
  return Run(opts, [&](const CallOptions& o) { return inner_->Stat(path, o); });
}

Result<std::vector<ObjectInfo>> RetryingStorage::List(std::string_view dir,
                                                      const CallOptions& opts) {
  return Run(opts, [&](const CallOptions& o) { return inner_->List(dir, o); });
}

Status RetryingStorage::Delete(std::string_view path, bool recursive, const CallOptions& opts) {
  return Run(opts, [&](const CallOptions& o) { return inner_->Delete(path, recursive, o); });
}

Status RetryingStorage::MkDirs(std::string_view path, const CallOptions& opts) {
  return Run(opts, [&](const CallOptions& o) { return inner_->MkDirs(path, o); });
}

Status RetryingStorage::Rename(std::string_view src, std::string_view dst,
                               const CallOptions& opts) {
  // A retry that finds src gone and dst present means an earlier attempt's reply was lost.
  auto already_done = [&](const Error& e, int) {
    if (e.code != Errc::kNotFound && e.code != Errc::kAlreadyExists) return false;
    auto s = inner_->Stat(src, opts);
    auto d = inner_->Stat(dst, opts);
    return s.ok() && !s->exists && d.ok() && d->exists;
  };
  return Run(
      opts, [&](const CallOptions& o) { return inner_->Rename(src, dst, o); }, already_done);
}

}  // namespace strata::tiered
