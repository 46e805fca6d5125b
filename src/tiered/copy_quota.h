#pragma once
// CopyQuota: the broker-wide cap on upload bandwidth, Kafka's
// remote.log.manager.copy.max.bytes.per.second (KIP-956). As in Kafka, the
// bytes of each uploaded segment are recorded once it is copied, and the next
// segment waits while the rate over the last `windows` windows is above the
// bound: a cap on the average, kept at segment granularity. Thread-safe.
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <utility>

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
  void PurgeLocked(int64_t now_ms);

  const uint64_t bound_;
  const int windows_;
  const int64_t window_ms_;
  std::mutex mu_;
  std::deque<std::pair<int64_t, uint64_t>> samples_;  // (window start ms, bytes); guarded
};

}  // namespace strata::tiered
