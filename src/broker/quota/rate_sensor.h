#pragma once
// RateSensor: the sampled rate behind one Kafka client quota sensor, as
// Kafka's Rate over a WindowedSum (clients/.../metrics/stats/Rate.java,
// SampledStat.java), with QuotaUtils.throttleTime on top. Values are summed
// into `samples` windows of `sample_ms` (quota.window.num, default 11, and
// quota.window.size.seconds, default 1 s), plus one extra sample kept while
// it still overlaps the monitored span. A window starts at the first record
// after the previous one is complete, not on a fixed grid.
//
// The rate is the sum of the live samples over the time since the oldest one
// started, counted as at least samples-1 full windows (so a first burst is
// spread over ~10 s rather than measured over a few ms). Measuring purges
// samples with no event in the last samples * sample_ms, as Kafka does; that
// is why the const accessors update internal state.
//
// Thread-safety: every method locks an internal mutex; safe from any thread
// (network threads record into shared sensors).
#include <cstdint>
#include <mutex>
#include <vector>

namespace strata::broker {

class RateSensor {
 public:
  static constexpr int kDefaultSamples = 11;         // quota.window.num
  static constexpr int64_t kDefaultSampleMs = 1000;  // quota.window.size.seconds

  // `samples` >= 1 and `sample_ms` >= 1 (Kafka's config validation).
  explicit RateSensor(int samples = kDefaultSamples, int64_t sample_ms = kDefaultSampleMs);

  // Adds `value` at `now_ms` (a negative value takes back an earlier one, as
  // Kafka's unrecordQuotaSensor does for a throttled fetch).
  void Record(double value, int64_t now_ms);
  // Units per second (Rate.measure).
  double Rate(int64_t now_ms) const;
  // The span the rate is measured over, in ms (Rate.windowSize).
  int64_t WindowSizeMs(int64_t now_ms) const;
  // How long to add no value so the rate comes back to `bound`
  // (QuotaUtils.throttleTime: (rate - bound) / bound * window size, rounded);
  // 0 while rate <= bound (Quota.acceptable).
  int64_t ThrottleTimeMs(double bound, int64_t now_ms) const;
  // Record then ThrottleTimeMs under one lock (Sensor.record with checkQuotas).
  int64_t RecordAndGetThrottleTimeMs(double value, double bound, int64_t now_ms);
  // When Record last ran; INT64_MIN before the first.
  int64_t last_record_ms() const;

  int samples() const { return samples_; }
  int64_t sample_ms() const { return sample_ms_; }

 private:
  struct Sample {
    double value = 0;
    int64_t start_ms = 0;
    int64_t last_event_ms = 0;
    void Reset(int64_t now_ms) { *this = Sample{0, now_ms, now_ms}; }
  };

  void RecordLocked(double value, int64_t now_ms);
  void PurgeLocked(int64_t now_ms) const;
  int64_t WindowSizeLocked(int64_t now_ms) const;
  double RateLocked(int64_t now_ms) const;
  int64_t ThrottleTimeLocked(double bound, int64_t now_ms) const;

  const int samples_;
  const int64_t sample_ms_;
  mutable std::mutex mu_;
  // A ring of up to samples_ + 1 windows; measuring resets obsolete ones.
  mutable std::vector<Sample> ring_;
  size_t current_ = 0;
  int64_t last_record_ms_;
};

}  // namespace strata::broker
