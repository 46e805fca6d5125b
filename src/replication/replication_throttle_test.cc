#include "replication/replication_throttle.h"

#include <gtest/gtest.h>

namespace strata::replication {
namespace {

// At 1000 bytes/s a second's worth goes at once, then the throttle holds
// until the clock has paid the debt back; unthrottled never holds.
TEST(ReplicationThrottle, HoldsOnceMoreThanTheRateWentOut) {
  ManualClock clock{0};
  ReplicationThrottle t(&clock);
  EXPECT_FALSE(t.Exceeded());
  t.Record(1 << 30);
  EXPECT_FALSE(t.Exceeded());
  t.SetRate(1000);
  EXPECT_FALSE(t.Exceeded());
  t.Record(600);
  EXPECT_FALSE(t.Exceeded());
  t.Record(900);  // 500 owed
  EXPECT_TRUE(t.Exceeded());
  clock.Advance(400);
  EXPECT_TRUE(t.Exceeded());  // 100 still owed
  clock.Advance(200);
  EXPECT_FALSE(t.Exceeded());
  // Idle for a minute: no more than a second's worth banked.
  clock.Advance(60000);
  t.Record(1001);
  EXPECT_TRUE(t.Exceeded());
  t.SetRate(kUnthrottled);
  EXPECT_FALSE(t.Exceeded());
}

TEST(ReplicationThrottle, ThrottledReplicaLists) {
  EXPECT_FALSE(ThrottledReplicasContain("", 0, NodeId(1)));
  EXPECT_TRUE(ThrottledReplicasContain("*", 7, NodeId(9)));
  EXPECT_TRUE(ThrottledReplicasContain("0:1,1:2", 1, NodeId(2)));
  EXPECT_TRUE(ThrottledReplicasContain("0:1, 1:2 ", 1, NodeId(2)));
  EXPECT_FALSE(ThrottledReplicasContain("0:1,1:2", 1, NodeId(1)));
  EXPECT_FALSE(ThrottledReplicasContain("10:1", 1, NodeId(1)));
  EXPECT_FALSE(ThrottledReplicasContain("x:1,1", 1, NodeId(1)));
}

}  // namespace
}  // namespace strata::replication
