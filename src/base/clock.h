#pragma once
// Clock: the one source of wall and monotonic time, so tests can freeze or
// advance it (retention, segment.ms, session timeouts).
#include <chrono>
#include <cstdint>

namespace strata {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch (record timestamps, retention).
  virtual int64_t NowMs() const = 0;
  // Monotonic milliseconds (timeouts).
  virtual int64_t MonotonicMs() const = 0;

  // The process-wide real clock.
  static Clock* Real();
};

// A clock tests move by hand.
class ManualClock : public Clock {
 public:
  explicit ManualClock(int64_t now_ms) : now_(now_ms) {}
  int64_t NowMs() const override { return now_; }
  int64_t MonotonicMs() const override { return now_; }
  void Advance(int64_t ms) { now_ += ms; }
  void Set(int64_t ms) { now_ = ms; }

 private:
  int64_t now_;
};

}  // namespace strata
