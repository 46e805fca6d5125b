#include "broker/quota/rate_sensor.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/check.h"

namespace strata::broker {

namespace rate_sensor_impl {

// Java's Math.round(double) to a long: half up, saturating (an infinite
// throttle, from a zero bound, becomes the largest value).
int64_t RoundHalfUp(double x) {
  const double r = std::floor(x + 0.5);
  if (!(r < 9.2e18)) return std::numeric_limits<int64_t>::max();
  if (r < -9.2e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(r);
}

}  // namespace rate_sensor_impl

RateSensor::RateSensor(int samples, int64_t sample_ms)
    : samples_(samples),
      sample_ms_(sample_ms),
      last_record_ms_(std::numeric_limits<int64_t>::min()) {
  STRATA_CHECK(samples >= 1 && sample_ms >= 1, "RateSensor: samples {} sample_ms {}", samples,
               sample_ms);
  ring_.reserve(static_cast<size_t>(samples) + 1);
}

void RateSensor::Record(double value, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  RecordLocked(value, now_ms);
}

double RateSensor::Rate(int64_t now_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  return RateLocked(now_ms);
}

int64_t RateSensor::WindowSizeMs(int64_t now_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  return WindowSizeLocked(now_ms);
}

int64_t RateSensor::ThrottleTimeMs(double bound, int64_t now_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ThrottleTimeLocked(bound, now_ms);
}

int64_t RateSensor::RecordAndGetThrottleTimeMs(double value, double bound, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  RecordLocked(value, now_ms);
  return ThrottleTimeLocked(bound, now_ms);
}

int64_t RateSensor::last_record_ms() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_record_ms_;
}

// SampledStat.record: into the current window, or the next one once the
// current has lasted sample_ms (the ring reuses the oldest slot).
void RateSensor::RecordLocked(double value, int64_t now_ms) {
  last_record_ms_ = now_ms;
  if (ring_.empty()) ring_.push_back(Sample{0, now_ms, now_ms});
  if (now_ms - ring_[current_].start_ms >= sample_ms_) {
    current_ = (current_ + 1) % (static_cast<size_t>(samples_) + 1);
    if (current_ >= ring_.size()) {
      ring_.push_back(Sample{0, now_ms, now_ms});
    } else {
      ring_[current_].Reset(now_ms);
    }
  }
  Sample& sample = ring_[current_];
  sample.value += value;
  sample.last_event_ms = now_ms;
}

// SampledStat.purgeObsoleteSamples: a window with no event in the monitored
// span restarts empty at now (one that started earlier but saw an event inside
// the span is kept whole).
void RateSensor::PurgeLocked(int64_t now_ms) const {
  const int64_t expire_age = samples_ * sample_ms_;
  for (Sample& sample : ring_) {
    if (now_ms - sample.last_event_ms >= expire_age) sample.Reset(now_ms);
  }
}

// Rate.windowSize.
int64_t RateSensor::WindowSizeLocked(int64_t now_ms) const {
  PurgeLocked(now_ms);
  if (ring_.empty()) ring_.push_back(Sample{0, now_ms, now_ms});  // SampledStat.oldest
  int64_t oldest_start = ring_[0].start_ms;
  for (const Sample& sample : ring_) oldest_start = std::min(oldest_start, sample.start_ms);
  int64_t elapsed = now_ms - oldest_start;
  const int64_t full_windows = elapsed / sample_ms_;
  const int64_t min_full_windows = samples_ - 1;
  if (full_windows < min_full_windows) elapsed += (min_full_windows - full_windows) * sample_ms_;
  return std::max<int64_t>(elapsed, 1);
}

// Rate.measure over WindowedSum: the sum per second.
double RateSensor::RateLocked(int64_t now_ms) const {
  PurgeLocked(now_ms);
  double total = 0;
  for (const Sample& sample : ring_) total += sample.value;
  return total / (static_cast<double>(WindowSizeLocked(now_ms)) / 1000.0);
}

// QuotaUtils.throttleTime: with O the rate over a window W and T the bound,
// waiting X with nothing recorded gives O * W / (W + X) = T, so
// X = (O - T) / T * W.
int64_t RateSensor::ThrottleTimeLocked(double bound, int64_t now_ms) const {
  const double rate = RateLocked(now_ms);
  if (rate <= bound) return 0;
  const double window = static_cast<double>(WindowSizeLocked(now_ms));
  return std::max<int64_t>(0, rate_sensor_impl::RoundHalfUp((rate - bound) / bound * window));
}

}  // namespace strata::broker
