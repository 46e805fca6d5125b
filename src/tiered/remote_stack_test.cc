// Tests of OpenRemoteStack: the configured resilience layers and the test-only fault layer.
#include "tiered/remote_stack.h"

#include <gtest/gtest.h>

#include "tiered/test_util.h"

namespace strata::tiered {
namespace {

using testing::TempDir;
using testing::ToBytes;

RemoteStackOptions FastRetries() {
  RemoteStackOptions o;
  o.resilience.retry.max_attempts = 3;
  o.resilience.retry.initial_backoff = std::chrono::milliseconds(1);
  o.resilience.retry.max_backoff = std::chrono::milliseconds(2);
  o.resilience.breaker.failure_threshold = 100;
  return o;
}

TEST(RemoteStackTest, NoFaultsByDefault) {
  TempDir dir;
  auto stack = OpenRemoteStack("file://" + dir.path(), FastRetries());
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  ASSERT_NE(stack->hedge, nullptr);
  ASSERT_NE(stack->retry, nullptr);
  ASSERT_NE(stack->breaker, nullptr);
  Bytes data = ToBytes("hello");
  ASSERT_TRUE(stack->storage->Put("a/b", PutSource::Memory(data)).ok());
  auto got = stack->storage->Get("a/b");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, data);
  EXPECT_EQ(stack->counters().retry.retries, 0u);
}

TEST(RemoteStackTest, PutFaultsSitBelowTheRetries) {
  TempDir dir;
  RemoteStackOptions o = FastRetries();
  o.faults.put_fail_ratio = 1.0;
  o.resilience.hedge_reads = false;
  auto stack = OpenRemoteStack("file://" + dir.path(), o);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  EXPECT_EQ(stack->hedge, nullptr);
  Status st = stack->storage->Put("x", PutSource::Memory(ToBytes("x")));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kUnavailable);
  // Every attempt reached the fault layer and was retried; nothing was written.
  EXPECT_EQ(stack->counters().retry.attempts, 3u);
  EXPECT_EQ(stack->counters().retry.exhausted, 1u);
  EXPECT_EQ(stack->storage->Get("x").error().code, Errc::kNotFound);
}

TEST(RemoteStackTest, DelayedGetsAreHedged) {
  TempDir dir;
  RemoteStackOptions o = FastRetries();
  o.faults.get_delay_ratio = 0.5;
  o.faults.get_delay = std::chrono::milliseconds(500);
  o.resilience.hedge.threshold = std::chrono::milliseconds(20);
  o.resilience.hedge.max_hedge_ratio = 1.0;
  auto stack = OpenRemoteStack("file://" + dir.path(), o);
  ASSERT_TRUE(stack.ok()) << stack.error().message;
  Bytes data = ToBytes("payload");
  ASSERT_TRUE(stack->storage->Put("p", PutSource::Memory(data)).ok());
  for (int i = 0; i < 10; ++i) {
    auto got = stack->storage->Get("p");
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, data);
  }
  // The fault layer is under the hedger: delayed reads were hedged and the hedges won.
  EXPECT_GT(stack->counters().hedge.hedges_fired, 0u);
  EXPECT_GT(stack->counters().hedge.hedges_won, 0u);
}

}  // namespace
}  // namespace strata::tiered
