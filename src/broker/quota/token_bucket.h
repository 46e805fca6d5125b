#pragma once
// TokenBucket: a client's credit against a byte-rate quota, as Kafka's
// TokenBucket stat (KIP-599). The balance fills at the quota's bound, up to
// bound x burst seconds; each request takes its bytes; when the balance goes
// below zero the throttle is the time it needs to come back to zero. Unlike
// a sampled rate, whose estimate swings as heavy samples leave its window,
// this holds a saturating client to the bound over any interval longer
// than its burst (Strata uses it for produce and fetch byte rates; Kafka's
// sampled Rate still measures them for metrics).
//
// Thread-safety: an internal mutex; safe from any thread.
#include <cstdint>
#include <mutex>

namespace strata::broker {

class TokenBucket {
 public:
  // The balance starts full: a new client may send `burst_seconds` of its
  // quota at once, as Kafka's first quota window allows.
  explicit TokenBucket(double burst_seconds) : burst_seconds_(burst_seconds) {}

  // Takes `value` at `now_ms` under `bound` (per second); the throttle time
  // in ms, 0 while the balance stays at or above zero.
  int64_t TakeAndGetThrottleMs(double value, double bound, int64_t now_ms);
  double balance() const;

 private:
  const double burst_seconds_;
  mutable std::mutex mu_;
  bool started_ = false;
  double tokens_ = 0;
  int64_t last_ms_ = 0;
};

}  // namespace strata::broker
