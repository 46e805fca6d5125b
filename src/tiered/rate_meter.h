#pragma once
// RateMeter: bytes per second over the last few fixed windows, as Kafka's
// SampledStat Rate measures it: the sum of the windows still in range over
// the time they span, at least all windows but the current one (so a burst
// just recorded is not divided by a few milliseconds). Thread-safe.
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <utility>

namespace strata::tiered {

class RateMeter {
 public:
  RateMeter(int windows, std::chrono::milliseconds window_size);

  void Record(uint64_t bytes, int64_t now_ms);
  // What the windows in range hold, and the milliseconds the rate is over.
  std::pair<uint64_t, int64_t> SumAndSpan(int64_t now_ms) const;
  double BytesPerSecond(int64_t now_ms) const;

 private:
  void PurgeLocked(int64_t now_ms) const;

  const int windows_;
  const int64_t window_ms_;
  mutable std::mutex mu_;
  // (window start ms, bytes), oldest first; guarded by mu_. Reads drop the
  // windows that aged out.
  mutable std::deque<std::pair<int64_t, uint64_t>> samples_;
};

}  // namespace strata::tiered
