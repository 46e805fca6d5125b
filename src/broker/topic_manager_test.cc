// TopicManager over a real embedded metadata store: which replicas a broker
// back with an empty log directory opens.
#include "broker/topic_manager.h"

#include <gtest/gtest.h>

#include <climits>

#include "broker/in_process_topics.h"

namespace strata::broker {
namespace {

using cluster::NodeId;

class TopicManagerTest : public ::testing::Test {
 protected:
  // A one-partition topic with replicas {1, 2}, led by broker 1 (this one).
  int64_t MakeTopic(const std::string& name) {
    return broker_.MakeTopic(name, {{NodeId(1), NodeId(2)}});
  }

  testing::InProcessTopics broker_;
  TopicManager& topics_ = broker_.topics();
};

// A replica whose record still counts on data this broker lost (it leads
// there) is not opened: it would lead with an empty log. A partition made
// after the loss opens at once; the held one opens once nothing counts on the
// lost data any more.
TEST_F(TopicManagerTest, ABrokerBackEmptyOpensNoReplicaThatCountsOnWhatItLost) {
  MakeTopic("before");
  topics_.SetLostDataBefore(INT64_MAX);  // new, not registered yet
  ASSERT_TRUE(topics_.Start().ok());
  EXPECT_EQ(topics_.GetPartition({"before", 0}), nullptr);

  const int64_t registered = broker_.metadata().view().revision() + 1;
  topics_.SetLostDataBefore(registered);
  const int64_t after = MakeTopic("after");
  ASSERT_GE(after, registered);
  ASSERT_TRUE(topics_.ReconcileNow().ok());
  EXPECT_EQ(topics_.GetPartition({"before", 0}), nullptr);
  auto opened = topics_.GetPartition({"after", 0});
  ASSERT_NE(opened, nullptr);
  EXPECT_EQ(opened->leader(), NodeId(1));

  topics_.SetLostDataBefore(0);  // the controller forgot it everywhere; settled
  ASSERT_TRUE(topics_.ReconcileNow().ok());
  EXPECT_NE(topics_.GetPartition({"before", 0}), nullptr);
}

// A broker with its data opens every replica placed on it.
TEST_F(TopicManagerTest, ABrokerWithItsDataOpensEveryReplica) {
  MakeTopic("t");
  ASSERT_TRUE(topics_.Start().ok());
  EXPECT_NE(topics_.GetPartition({"t", 0}), nullptr);
}

}  // namespace
}  // namespace strata::broker
