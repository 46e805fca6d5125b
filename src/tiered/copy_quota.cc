#include "tiered/copy_quota.h"

namespace strata::tiered {

CopyQuota::CopyQuota(uint64_t bytes_per_second, int windows, std::chrono::milliseconds window_size)
    : bound_(bytes_per_second), meter_(windows, window_size) {}

void CopyQuota::Record(uint64_t bytes, int64_t now_ms) {
  if (!unlimited()) meter_.Record(bytes, now_ms);
}

std::chrono::milliseconds CopyQuota::ThrottleTime(int64_t now_ms) {
  if (unlimited()) return std::chrono::milliseconds(0);
  const auto [sum, span] = meter_.SumAndSpan(now_ms);
  const double allowed = double(bound_) * double(span) / 1000.0;
  if (double(sum) <= allowed) return std::chrono::milliseconds(0);
  // The wait after which the same bytes over a longer span meet the bound.
  return std::chrono::milliseconds(int64_t((double(sum) - allowed) * 1000.0 / double(bound_)) + 1);
}

}  // namespace strata::tiered
