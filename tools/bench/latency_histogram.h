#pragma once
// LatencyHistogram: microsecond latencies in log-spaced buckets (about 1%
// resolution), cheap to record from librdkafka's delivery callback.
#include <cmath>
#include <cstdint>
#include <vector>

namespace strata::bench {

class LatencyHistogram {
 public:
  LatencyHistogram() : buckets_(kBuckets, 0) {}

  void Record(int64_t micros) {
    if (micros < 1) micros = 1;
    int b = static_cast<int>(std::log(static_cast<double>(micros)) / std::log(kGrowth));
    if (b >= kBuckets) b = kBuckets - 1;
    ++buckets_[b];
    ++count_;
  }

  // Latency (microseconds) below which `fraction` of samples fall.
  double Percentile(double fraction) const {
    if (count_ == 0) return 0;
    int64_t target = static_cast<int64_t>(std::ceil(fraction * static_cast<double>(count_)));
    int64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
      seen += buckets_[b];
      if (seen >= target) return std::pow(kGrowth, b + 1);
    }
    return std::pow(kGrowth, kBuckets);
  }

  int64_t count() const { return count_; }

 private:
  static constexpr double kGrowth = 1.01;
  static constexpr int kBuckets = 2400;  // up to ~23 s
  std::vector<int64_t> buckets_;
  int64_t count_ = 0;
};

}  // namespace strata::bench
