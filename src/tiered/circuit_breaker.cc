#include "tiered/circuit_breaker.h"

#include <fmt/format.h>

#include <vector>

#include "base/log.h"

namespace strata::tiered {

using Changes = std::vector<std::pair<BreakerState, BreakerState>>;

const char* BreakerStateName(BreakerState s) {
  switch (s) {
    case BreakerState::kClosed:
      return "closed";
    case BreakerState::kOpen:
      return "open";
    case BreakerState::kHalfOpen:
      return "half-open";
  }
  return "?";
}

CircuitBreaker::CircuitBreaker(std::unique_ptr<RemoteStorage> inner, BreakerOptions options)
    : inner_(std::move(inner)),
      opts_(std::move(options)),
      clock_(opts_.clock ? opts_.clock : Clock::Real()) {}

BreakerState CircuitBreaker::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

BreakerCounters CircuitBreaker::counters() const {
  BreakerCounters c;
  c.state = state();
  c.calls = calls_.load();
  c.failures = failures_.load();
  c.rejected = rejected_.load();
  c.opened = opened_.load();
  c.half_opened = half_opened_.load();
  c.closed = closed_.load();
  return c;
}

void CircuitBreaker::SetState(BreakerState to, Changes* changes) {
  if (state_ == to) return;
  changes->emplace_back(state_, to);
  state_ = to;
  if (to == BreakerState::kOpen) {
    opened_at_ms_ = clock_->MonotonicMs();
    opened_.fetch_add(1, std::memory_order_relaxed);
  } else if (to == BreakerState::kHalfOpen) {
    half_opened_.fetch_add(1, std::memory_order_relaxed);
  } else {
    closed_.fetch_add(1, std::memory_order_relaxed);
  }
}

void CircuitBreaker::Notify(const Changes& changes) {
  for (const auto& [from, to] : changes) {
    log::Get("tiered")->warn("remote storage circuit breaker {} -> {}", BreakerStateName(from),
                             BreakerStateName(to));
    if (opts_.on_transition) opts_.on_transition(from, to);
  }
}

CircuitBreaker::Admission CircuitBreaker::Admit() {
  Changes changes;
  Admission how = Admission::kReject;
  {
    std::lock_guard lock(mu_);
    if (state_ == BreakerState::kClosed) {
      how = Admission::kNormal;
    } else if (state_ == BreakerState::kOpen &&
               clock_->MonotonicMs() - opened_at_ms_ >= opts_.open_duration.count()) {
      SetState(BreakerState::kHalfOpen, &changes);
      probe_in_flight_ = true;
      how = Admission::kProbe;
    } else if (state_ == BreakerState::kHalfOpen && !probe_in_flight_) {
      probe_in_flight_ = true;  // the previous probe was cancelled without a verdict
      how = Admission::kProbe;
    }
  }
  Notify(changes);
  return how;
}

void CircuitBreaker::Record(Admission how, Errc code, const std::string& message) {
  bool failed = IsRetriable(code);
  if (failed) failures_.fetch_add(1, std::memory_order_relaxed);
  Changes changes;
  {
    std::lock_guard lock(mu_);
    if (failed) last_error_ = message;
    if (how == Admission::kProbe) {
      probe_in_flight_ = false;
      if (code == Errc::kShuttingDown) {
        // Cancelled by the caller: no verdict; the next call probes again.
      } else if (failed) {
        SetState(BreakerState::kOpen, &changes);  // restarts the cool-down
      } else {
        consecutive_failures_ = 0;
        SetState(BreakerState::kClosed, &changes);
      }
    } else if (state_ == BreakerState::kClosed) {
      // Results of calls admitted before the breaker opened are ignored once it has.
      consecutive_failures_ = failed ? consecutive_failures_ + 1 : 0;
      if (consecutive_failures_ >= opts_.failure_threshold) SetState(BreakerState::kOpen, &changes);
    }
  }
  Notify(changes);
}

template <typename Fn>
auto CircuitBreaker::Guard(Fn&& fn) -> decltype(fn()) {
  Admission how = Admit();
  if (how == Admission::kReject) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(mu_);
    return MakeError(
        Errc::kUnavailable,
        fmt::format("remote storage circuit breaker open (last error: {})", last_error_));
  }
  calls_.fetch_add(1, std::memory_order_relaxed);
  auto result = fn();
  Record(how, result.ok() ? Errc::kOk : result.error().code,
         result.ok() ? std::string() : result.error().message);
  return result;
}

Status CircuitBreaker::Put(std::string_view path, const PutSource& src, const CallOptions& opts) {
  return Guard([&] { return inner_->Put(path, src, opts); });
}

Result<Bytes> CircuitBreaker::Get(std::string_view path, uint64_t offset, uint64_t length,
                                  const CallOptions& opts) {
  return Guard([&] { return inner_->Get(path, offset, length, opts); });
}

Result<ObjectInfo> CircuitBreaker::Stat(std::string_view path, const CallOptions& opts) {
  return Guard([&] { return inner_->Stat(path, opts); });
}

Result<std::vector<ObjectInfo>> CircuitBreaker::List(std::string_view dir,
                                                     const CallOptions& opts) {
  return Guard([&] { return inner_->List(dir, opts); });
}

Status CircuitBreaker::Delete(std::string_view path, bool recursive, const CallOptions& opts) {
  return Guard([&] { return inner_->Delete(path, recursive, opts); });
}

Status CircuitBreaker::MkDirs(std::string_view path, const CallOptions& opts) {
  return Guard([&] { return inner_->MkDirs(path, opts); });
}

Status CircuitBreaker::Rename(std::string_view src, std::string_view dst, const CallOptions& opts) {
  return Guard([&] { return inner_->Rename(src, dst, opts); });
}

}  // namespace strata::tiered
