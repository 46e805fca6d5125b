// KIP-848 consumer groups through the GroupCoordinator: heartbeats written to
// the offsets log and replayed after a restart, session timeouts on Tick,
// commits checked against member epochs, and the administrative requests.
#include <gtest/gtest.h>

#include "coordinator/coordinator_test_util.h"
#include "coordinator/topic_catalog_test_util.h"

namespace strata::coordinator {
namespace {

using protocol::ConsumerGroupHeartbeatRequest;
using protocol::ConsumerGroupHeartbeatResponse;
using protocol::ErrorCode;
using testing::CoordinatorTest;

const TopicId kOrders = [] {
  TopicId id{};
  id[0] = 0x42;
  return id;
}();

class ConsumerCoordinatorTest : public CoordinatorTest {
 protected:
  void SetUp() override {
    CoordinatorTest::SetUp();
    config_.consumer.session_timeout_ms = 45000;
    Rebuild();
  }

  // A coordinator on the same logs (a restart), with the topic catalog.
  void Rebuild() {
    Restart();
    coord_->SetTopicCatalog(testing::MapCatalog(topics_));
  }

  testing::TopicMap topics_{{"orders", {kOrders, 4}}};

  ConsumerGroupHeartbeatResponse Beat(const std::string& member, int32_t epoch,
                                      std::optional<std::set<int32_t>> owned) {
    ConsumerGroupHeartbeatRequest req;
    req.group_id = "g";
    req.member_id = member;
    req.member_epoch = epoch;
    if (epoch == 0) {
      req.rebalance_timeout_ms = 30000;
      req.subscribed_topic_names = std::vector<std::string>{"orders"};
      owned = std::set<int32_t>{};
    }
    if (owned) {
      req.topic_partitions.emplace();
      if (!owned->empty())
        req.topic_partitions->push_back({kOrders, {owned->begin(), owned->end()}});
    }
    return coord_->ConsumerGroupHeartbeat({"client", "/127.0.0.1", 1}, req);
  }

  static std::set<int32_t> Assigned(const ConsumerGroupHeartbeatResponse& r) {
    std::set<int32_t> out;
    if (r.assignment) {
      for (const auto& t : *r.assignment) out.insert(t.partitions.begin(), t.partitions.end());
    }
    return out;
  }
};

TEST_F(ConsumerCoordinatorTest, AGroupComesBackFromTheLogAfterARestart) {
  auto a = Beat("a", 0, std::nullopt);
  ASSERT_EQ(a.error_code, 0) << a.error_message.value_or("");
  EXPECT_EQ(Assigned(a), (std::set<int32_t>{0, 1, 2, 3}));
  auto listed = coord_->ListGroups({});
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].protocol_type, "consumer");
  EXPECT_EQ(listed[0].group_state, "Stable");

  Rebuild();
  // The member carries on at its epoch: no fencing, no rebalance.
  auto again = Beat("a", a.member_epoch, std::set<int32_t>{0, 1, 2, 3});
  EXPECT_EQ(again.error_code, 0);
  EXPECT_EQ(again.member_epoch, a.member_epoch);
  auto described = coord_->DescribeConsumerGroup("g");
  EXPECT_EQ(described.error_code, 0);
  EXPECT_EQ(described.group_state, "Stable");
  ASSERT_EQ(described.members.size(), 1u);
  EXPECT_EQ(described.members[0].assignment.topic_partitions.at(0).topic_name, "orders");
  EXPECT_EQ(described.members[0].assignment.topic_partitions.at(0).partitions.size(), 4u);
  // Not a classic group.
  EXPECT_EQ(coord_->DescribeGroup("g").group_state, "Dead");
}

TEST_F(ConsumerCoordinatorTest, ASilentMemberIsFencedOnTickAndItsPartitionsMove) {
  auto a = Beat("a", 0, std::nullopt);
  auto b = Beat("b", 0, std::nullopt);
  a = Beat("a", a.member_epoch, std::set<int32_t>{0, 1, 2, 3});  // revokes two
  a = Beat("a", a.member_epoch, Assigned(a));
  b = Beat("b", b.member_epoch, std::set<int32_t>{});
  ASSERT_EQ(Assigned(b).size(), 2u);
  // b goes silent; a keeps heartbeating (an answer names its partitions
  // only when they change).
  std::set<int32_t> a_owned = Assigned(a);
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(5000);
    coord_->Tick();
    a = Beat("a", a.member_epoch, std::nullopt);
    ASSERT_EQ(a.error_code, 0);
    if (a.assignment) a_owned = Assigned(a);
  }
  EXPECT_EQ(coord_->DescribeConsumerGroup("g").members.size(), 1u);
  EXPECT_EQ(a_owned, (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(Beat("b", b.member_epoch, std::nullopt).error_code, Code(ErrorCode::kUnknownMemberId));
}

TEST_F(ConsumerCoordinatorTest, CommitsAreCheckedAgainstTheMembersEpoch) {
  auto a = Beat("a", 0, std::nullopt);
  const int32_t epoch = a.member_epoch;
  EXPECT_EQ(Commit("g", epoch, "a", "orders", {{0, 5}}, 9).topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(Committed("g", "orders", 0), 5);
  EXPECT_EQ(Commit("g", epoch + 1, "a", "orders", {{0, 6}}, 9).topics[0].partitions[0].error_code,
            Code(ErrorCode::kStaleMemberEpoch));
  EXPECT_EQ(Commit("g", epoch + 1, "a", "orders", {{0, 6}}, 8).topics[0].partitions[0].error_code,
            Code(ErrorCode::kIllegalGeneration));
  EXPECT_EQ(Commit("g", epoch, "z", "orders", {{0, 6}}, 9).topics[0].partitions[0].error_code,
            Code(ErrorCode::kUnknownMemberId));
  // An admin's commit (no member) is refused while the group has members.
  EXPECT_EQ(Commit("g", -1, "", "orders", {{0, 6}}, 9).topics[0].partitions[0].error_code,
            Code(ErrorCode::kUnknownMemberId));
  EXPECT_EQ(Committed("g", "orders", 0), 5);
}

TEST_F(ConsumerCoordinatorTest, AnEmptyGroupIsDeletedForGoodAndABusyOneIsNot) {
  auto a = Beat("a", 0, std::nullopt);
  ASSERT_EQ(
      Commit("g", a.member_epoch, "a", "orders", {{1, 9}}, 9).topics[0].partitions[0].error_code,
      0);
  EXPECT_EQ(coord_->DeleteGroup("g").error_code, Code(ErrorCode::kNonEmptyGroup));
  // A classic member cannot join while consumer-protocol members are in.
  auto join = Join("g", {});
  ASSERT_TRUE(join->has_value());
  EXPECT_EQ((*join)->error_code, Code(ErrorCode::kInconsistentGroupProtocol));

  EXPECT_EQ(Beat("a", -1, std::set<int32_t>{}).member_epoch, -1);
  EXPECT_EQ(coord_->DescribeConsumerGroup("g").group_state, "Empty");
  EXPECT_EQ(coord_->DeleteGroup("g").error_code, 0);
  Rebuild();
  EXPECT_TRUE(coord_->ListGroups({}).empty());
  EXPECT_EQ(coord_->DescribeConsumerGroup("g").error_code, Code(ErrorCode::kGroupIdNotFound));
  EXPECT_EQ(Committed("g", "orders", 1), -1);
}

// The coordinator matches a pattern again once its matches are
// kRegexRefreshMs old: a topic made later joins the subscription.
TEST_F(ConsumerCoordinatorTest, APatternPicksUpATopicMadeLater) {
  ConsumerGroupHeartbeatRequest join;
  join.group_id = "g";
  join.member_id = "a";
  join.rebalance_timeout_ms = 30000;
  join.subscribed_topic_names = std::vector<std::string>{};
  join.subscribed_topic_regex = "ord.*";
  join.topic_partitions.emplace();
  auto a = coord_->ConsumerGroupHeartbeat({"client", "/127.0.0.1", 1}, join);
  ASSERT_EQ(a.error_code, 0) << a.error_message.value_or("");
  EXPECT_EQ(Assigned(a).size(), 4u);
  TopicId later{};
  later[0] = 0x43;
  topics_["orders-late"] = {later, 2};
  clock_.Advance(kRegexRefreshMs - 1);
  EXPECT_EQ(Beat("a", a.member_epoch, std::nullopt).member_epoch, a.member_epoch);
  clock_.Advance(1);
  auto b = Beat("a", a.member_epoch, std::nullopt);
  EXPECT_EQ(b.member_epoch, a.member_epoch + 1);
  ASSERT_TRUE(b.assignment.has_value());
  EXPECT_EQ(b.assignment->size(), 2u);  // both topics
}

}  // namespace
}  // namespace strata::coordinator
