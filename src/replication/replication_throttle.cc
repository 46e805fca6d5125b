#include "replication/replication_throttle.h"

#include <algorithm>
#include <charconv>

namespace strata::replication {

void ReplicationThrottle::SetRate(int64_t bytes_per_second) {
  std::lock_guard lock(mu_);
  bytes_per_second = std::max<int64_t>(bytes_per_second, 0);
  if (bytes_per_second == rate_) return;
  if (rate_ == kUnthrottled) {  // a new throttle starts with a second's worth
    refilled_ms_ = clock_->MonotonicMs();
    tokens_ = static_cast<double>(bytes_per_second);
  } else {
    RefillLocked();
    tokens_ = std::min(tokens_, static_cast<double>(bytes_per_second));
  }
  rate_ = bytes_per_second;
}

int64_t ReplicationThrottle::rate() const {
  std::lock_guard lock(mu_);
  return rate_;
}

void ReplicationThrottle::RefillLocked() {
  const int64_t now = clock_->MonotonicMs();
  if (rate_ != kUnthrottled && refilled_ms_ >= 0) {
    // At most one second's worth banked, so an idle throttle allows no burst
    // bigger than the rate.
    tokens_ = std::min(static_cast<double>(rate_),
                       tokens_ + static_cast<double>(rate_) * double(now - refilled_ms_) / 1000.0);
  }
  refilled_ms_ = now;
}

bool ReplicationThrottle::Exceeded() {
  std::lock_guard lock(mu_);
  if (rate_ == kUnthrottled) return false;
  RefillLocked();
  return tokens_ <= 0;
}

void ReplicationThrottle::Record(int64_t bytes) {
  std::lock_guard lock(mu_);
  if (rate_ == kUnthrottled) return;
  RefillLocked();
  tokens_ -= static_cast<double>(bytes);
}

bool ThrottledReplicasContain(std::string_view list, int32_t partition, NodeId broker) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "*") return true;
    size_t colon = item.find(':');
    if (colon == std::string_view::npos) continue;
    int32_t p = -1, b = -1;
    auto pr = std::from_chars(item.data(), item.data() + colon, p);
    auto br = std::from_chars(item.data() + colon + 1, item.data() + item.size(), b);
    if (pr.ec == std::errc() && br.ec == std::errc() && p == partition && NodeId(b) == broker)
      return true;
  }
  return false;
}

}  // namespace strata::replication
