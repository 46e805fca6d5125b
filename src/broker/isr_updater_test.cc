// IsrUpdater against partitions opened by a real TopicManager over the
// embedded metadata store: ISR changes written to (and refused by) the store.
#include "broker/isr_updater.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "broker/in_process_topics.h"
#include "cluster/broker_session.h"
#include "cluster/test_util.h"

namespace strata::broker {
namespace {

using cluster::NodeId;

// The updater's view of the broker, as TopicManager gives it, over the
// partitions of `topics`.
class TestHost : public IsrUpdater::Host {
 public:
  explicit TestHost(TopicManager& topics) : topics_(topics) {}
  std::vector<std::shared_ptr<Partition>> LedPartitions() const override {
    auto all = topics_.LocalPartitions();
    std::erase_if(all, [&](const auto& p) { return p->leader() != topics_.self(); });
    return all;
  }
  int MinInsyncReplicas(const std::string&) const override { return 1; }
  Offset ContiguityBound(const Partition&) const override { return Offset::Max(); }
  void IsrChanged(Partition& p) override { changed.push_back(p.tp()); }
  void BeforePass() override { passes++; }
  bool Fenced() const override { return fenced; }

  std::vector<TopicPartition> changed;
  std::atomic<int> passes{0};
  bool fenced = false;

 private:
  TopicManager& topics_;
};

class IsrUpdaterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Broker 2 registers (eligible to join an ISR); broker 3 never does.
    cluster::BrokerSessionOptions o;
    o.registration.node_id = NodeId(2);
    o.registration.listeners = {{"PLAINTEXT", "127.0.0.1", 9092}};
    o.ttl = std::chrono::milliseconds(60'000);
    session_ = cluster::BrokerSession::Start(broker_.metadata(), std::move(o)).value();
    broker_.MakeTopic("t", {{NodeId(1), NodeId(2), NodeId(3)}});
    // The TopicManager's own updater stays out of the way: a fenced broker
    // changes nothing.
    broker_.topics().SetFenced(true);
    ASSERT_TRUE(broker_.topics().Start().ok());
    partition_ = broker_.topics().GetPartition({"t", 0});
    ASSERT_NE(partition_, nullptr);
    ASSERT_EQ(partition_->state().isr, std::vector<NodeId>{NodeId(1)});  // the leader alone
  }
  void TearDown() override { session_.reset(); }

  // Follower `r` fetches at the leader's log end now, under its current
  // registration (broker 2's session; none for broker 3).
  void CatchUp(int32_t r) {
    const int64_t epoch = r == 2 ? session_->epoch().value() : 0;
    partition_->OnFollowerFetch(NodeId(r), partition_->log()->log_end_offset(), 1,
                                clock_.MonotonicMs(), kNoOffset, epoch);
  }

  // The partition's record in the store.
  cluster::PartitionRecord Stored() {
    const std::string id = cluster::UuidToBase64(broker_.topics().GetTopic("t")->id);
    return broker_.metadata().view().Partitions(id).at(0).record;
  }

  testing::InProcessTopics broker_;
  std::unique_ptr<cluster::BrokerSession> session_;
  std::shared_ptr<Partition> partition_;
  const int64_t lag_ms_ = broker_.config().GetLong("replica.lag.time.max.ms");
  // The replicas' catch-up times are on the real monotonic clock: the
  // updater's starts there and is moved on by hand.
  ManualClock clock_{Clock::Real()->MonotonicMs()};
  PeerLiveness peers_{broker_.metadata(), NodeId(1), PeerLivenessOptions{.enabled = false}};
  ReassignmentProgress progress_;
  TestHost host_{broker_.topics()};
  IsrUpdater updater_{host_, broker_.config(), broker_.metadata(), &clock_, peers_, progress_};
};

// A registered follower that catches up joins; one that then stops fetching
// leaves after replica.lag.time.max.ms; each change is written to the store
// and applied to the partition at once.
TEST_F(IsrUpdaterTest, ACaughtUpFollowerJoinsAndASilentOneLeavesAfterTheLagTime) {
  EXPECT_EQ(updater_.UpdateOnce(), 0);  // nobody caught up yet
  CatchUp(2);
  EXPECT_EQ(updater_.UpdateOnce(), 1);
  EXPECT_EQ(Stored().isr, (std::vector<NodeId>{NodeId(1), NodeId(2)}));
  EXPECT_EQ(partition_->state().isr, (std::vector<NodeId>{NodeId(1), NodeId(2)}));
  EXPECT_EQ(updater_.expands(), 1);
  EXPECT_EQ(updater_.UpdateOnce(), 0);  // nothing more to change

  clock_.Advance(lag_ms_ / 2);
  EXPECT_EQ(updater_.UpdateOnce(), 0);  // not lagging yet
  clock_.Advance(lag_ms_);
  EXPECT_EQ(updater_.UpdateOnce(), 1);
  const cluster::PartitionRecord stored = Stored();
  EXPECT_EQ(stored.isr, std::vector<NodeId>{NodeId(1)});
  EXPECT_EQ(stored.partition_epoch.value(), 2);  // one write per change
  EXPECT_EQ(partition_->state().isr, std::vector<NodeId>{NodeId(1)});
  EXPECT_EQ(host_.changed, (std::vector<TopicPartition>{partition_->tp(), partition_->tp()}));
  EXPECT_EQ(updater_.shrinks(), 1);
}

// Kafka's INELIGIBLE_REPLICA: broker 3 never registered, so however caught
// up it is, it is not proposed.
TEST_F(IsrUpdaterTest, ACaughtUpFollowerThatIsNotARegisteredBrokerIsNotTakenIn) {
  CatchUp(3);
  EXPECT_EQ(updater_.UpdateOnce(), 0);
  EXPECT_EQ(Stored().isr, std::vector<NodeId>{NodeId(1)});
  EXPECT_EQ(updater_.expands(), 0);
}

TEST_F(IsrUpdaterTest, AFencedBrokerWritesNoChange) {
  host_.fenced = true;
  CatchUp(2);
  EXPECT_EQ(updater_.UpdateOnce(), 0);
  EXPECT_EQ(Stored().isr, std::vector<NodeId>{NodeId(1)});
  EXPECT_TRUE(host_.changed.empty());
}

TEST_F(IsrUpdaterTest, TheThreadRunsPassesUntilStopped) {
  updater_.Start();
  const bool ran = cluster::testing::Eventually([&] { return host_.passes >= 2; });
  updater_.Stop();
  EXPECT_TRUE(ran) << host_.passes << " passes";
}

}  // namespace
}  // namespace strata::broker
