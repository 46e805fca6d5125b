#pragma once
// ReplicationThrottle: one side of Kafka's replication quota on this broker
// (leader.replication.throttled.rate or follower.replication.throttled.rate,
// bytes per second), shared by every throttled replica of that side. Bytes
// are recorded as they are sent (leader) or appended (follower); once more
// than a second's worth at the rate has gone out ahead of time, throttled
// replicas wait (a token bucket holding one second of bytes). As in Kafka,
// only replicas named by the topic's *.replication.throttled.replicas and
// not in the ISR are throttled; callers decide that.
//
// Thread-safety: all methods are safe from any thread.
#include <cstdint>
#include <limits>
#include <mutex>
#include <string_view>

#include "base/clock.h"
#include "base/ids.h"

namespace strata::replication {

inline constexpr int64_t kUnthrottled = std::numeric_limits<int64_t>::max();

class ReplicationThrottle {
 public:
  explicit ReplicationThrottle(const ::strata::Clock* clock) : clock_(clock) {}

  // Takes the configured rate (kUnthrottled: none); the bucket keeps what it has.
  void SetRate(int64_t bytes_per_second);
  int64_t rate() const;
  // Whether throttled replicas must wait now.
  bool Exceeded();
  // `bytes` of throttled replication went out.
  void Record(int64_t bytes);

 private:
  void RefillLocked();

  const ::strata::Clock* clock_;
  mutable std::mutex mu_;
  int64_t rate_ = kUnthrottled;
  double tokens_ = 0;  // bytes that may go out now; negative: owed
  int64_t refilled_ms_ = -1;
};

// Kafka's throttled-replicas list (a topic's leader/follower
// .replication.throttled.replicas): empty, "*", or "partition:broker,...".
// Whether it names replica `broker` of `partition`.
bool ThrottledReplicasContain(std::string_view list, int32_t partition, NodeId broker);

}  // namespace strata::replication
