#include "tiered/copy_quota.h"

#include <algorithm>

namespace strata::tiered {

CopyQuota::CopyQuota(uint64_t bytes_per_second, int windows, std::chrono::milliseconds window_size)
    : bound_(bytes_per_second),
      windows_(std::max(windows, 2)),
      window_ms_(std::max<int64_t>(window_size.count(), 1)) {}

void CopyQuota::PurgeLocked(int64_t now_ms) {
  const int64_t oldest = (now_ms / window_ms_ - windows_ + 1) * window_ms_;
  while (!samples_.empty() && samples_.front().first < oldest) samples_.pop_front();
}

void CopyQuota::Record(uint64_t bytes, int64_t now_ms) {
  if (unlimited()) return;
  std::lock_guard lock(mu_);
  PurgeLocked(now_ms);
  const int64_t start = now_ms / window_ms_ * window_ms_;
  if (!samples_.empty() && samples_.back().first == start) {
    samples_.back().second += bytes;
  } else {
    samples_.emplace_back(start, bytes);
  }
}

std::chrono::milliseconds CopyQuota::ThrottleTime(int64_t now_ms) {
  if (unlimited()) return std::chrono::milliseconds(0);
  std::lock_guard lock(mu_);
  PurgeLocked(now_ms);
  if (samples_.empty()) return std::chrono::milliseconds(0);
  uint64_t sum = 0;
  for (const auto& [start, bytes] : samples_) sum += bytes;
  // Kafka's Rate: over the time the samples span, at least all windows but
  // the current one, so a single burst is not measured over a few ms.
  const int64_t elapsed =
      std::max(now_ms - samples_.front().first, int64_t(windows_ - 1) * window_ms_);
  const double allowed = double(bound_) * double(elapsed) / 1000.0;
  if (double(sum) <= allowed) return std::chrono::milliseconds(0);
  // The wait after which the same bytes over a longer span meet the bound.
  return std::chrono::milliseconds(int64_t((double(sum) - allowed) * 1000.0 / double(bound_)) + 1);
}

}  // namespace strata::tiered
