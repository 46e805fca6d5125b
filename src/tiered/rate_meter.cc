#include "tiered/rate_meter.h"

#include <algorithm>

namespace strata::tiered {

RateMeter::RateMeter(int windows, std::chrono::milliseconds window_size)
    : windows_(std::max(windows, 2)), window_ms_(std::max<int64_t>(window_size.count(), 1)) {}

void RateMeter::PurgeLocked(int64_t now_ms) const {
  const int64_t oldest = (now_ms / window_ms_ - windows_ + 1) * window_ms_;
  while (!samples_.empty() && samples_.front().first < oldest) samples_.pop_front();
}

void RateMeter::Record(uint64_t bytes, int64_t now_ms) {
  std::lock_guard lock(mu_);
  PurgeLocked(now_ms);
  const int64_t start = now_ms / window_ms_ * window_ms_;
  if (!samples_.empty() && samples_.back().first == start) {
    samples_.back().second += bytes;
  } else {
    samples_.emplace_back(start, bytes);
  }
}

std::pair<uint64_t, int64_t> RateMeter::SumAndSpan(int64_t now_ms) const {
  std::lock_guard lock(mu_);
  PurgeLocked(now_ms);
  uint64_t sum = 0;
  for (const auto& [start, bytes] : samples_) sum += bytes;
  const int64_t first = samples_.empty() ? now_ms : samples_.front().first;
  return {sum, std::max(now_ms - first, int64_t(windows_ - 1) * window_ms_)};
}

double RateMeter::BytesPerSecond(int64_t now_ms) const {
  const auto [sum, span] = SumAndSpan(now_ms);
  return double(sum) * 1000.0 / double(span);
}

}  // namespace strata::tiered
