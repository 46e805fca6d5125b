#include "broker/quota/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace strata::broker {

int64_t TokenBucket::TakeAndGetThrottleMs(double value, double bound, int64_t now_ms) {
  std::lock_guard lock(mu_);
  const double capacity = bound * burst_seconds_;
  if (!started_) {
    started_ = true;
    tokens_ = capacity;
  } else if (now_ms > last_ms_) {
    tokens_ = std::min(capacity, tokens_ + bound * static_cast<double>(now_ms - last_ms_) / 1000);
  }
  last_ms_ = std::max(last_ms_, now_ms);
  tokens_ = std::min(tokens_, capacity) - value;  // a lowered bound caps the credit
  if (tokens_ >= 0 || bound <= 0) return 0;
  return static_cast<int64_t>(std::ceil(-tokens_ / bound * 1000));
}

double TokenBucket::balance() const {
  std::lock_guard lock(mu_);
  return tokens_;
}

}  // namespace strata::broker
