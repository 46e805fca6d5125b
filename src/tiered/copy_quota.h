#pragma once
// CopyQuota: the broker-wide cap on upload bandwidth, Kafka's
// remote.log.manager.copy.max.bytes.per.second (KIP-956). As in Kafka, the
// bytes of each uploaded segment are recorded once it is copied, and the next
// segment waits while the rate over the last `windows` windows is above the
// bound: a cap on the average, kept at segment granularity. Thread-safe.
#include <chrono>
#include <cstdint>

#include "tiered/rate_meter.h"

namespace strata::tiered {

class CopyQuota {
 public:
  // bytes_per_second 0 = no cap.
  CopyQuota(uint64_t bytes_per_second, int windows, std::chrono::milliseconds window_size);

  bool unlimited() const { return bound_ == 0; }
  // How long an upload should wait at `now_ms` before it starts: 0 while
  // the recent rate is within the bound.
  std::chrono::milliseconds ThrottleTime(int64_t now_ms);
  void Record(uint64_t bytes, int64_t now_ms);

 private:
  const uint64_t bound_;
  RateMeter meter_;
};

}  // namespace strata::tiered
