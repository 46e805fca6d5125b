// ClassicRebalance on one group, without a coordinator: a ManualClock for the
// timers and the records it asks to persist captured (or refused).
#include "coordinator/classic_rebalance.h"

#include <gtest/gtest.h>

#include <optional>

namespace strata::coordinator {
namespace {

using protocol::ErrorCode;
using protocol::JoinGroupRequest;
using protocol::JoinGroupResponse;
using protocol::SyncGroupResponse;

ProtocolList RangeProtocol() { return {{"range", Bytes{1, 2, 3}}}; }

class ClassicRebalanceTest : public ::testing::Test {
 protected:
  ClassicRebalanceTest() { config_.initial_rebalance_delay_ms = 100; }

  // A JoinGroup at version 5 (member ids required, KIP-394); the answer if
  // it came before the call returned or once it comes.
  std::shared_ptr<std::optional<JoinGroupResponse>> Join(const std::string& member_id,
                                                         int32_t session_ms = 10'000) {
    JoinGroupRequest req;
    req.group_id = "g";
    req.member_id = member_id;
    req.session_timeout_ms = session_ms;
    req.rebalance_timeout_ms = 5'000;
    req.protocol_type = "consumer";
    req.protocols = RangeProtocol();
    RequestContext ctx{.client_id = "client", .client_host = "/127.0.0.1", .api_version = 5};
    auto slot = std::make_shared<std::optional<JoinGroupResponse>>();
    JoinCallback done = [slot](JoinGroupResponse r) { *slot = std::move(r); };
    rebalance_.Join(group_, ctx, req, done);
    return slot;
  }
  // A new member: asked for its id, then joining with it.
  std::pair<std::string, std::shared_ptr<std::optional<JoinGroupResponse>>> JoinNew(
      int32_t session_ms = 10'000) {
    auto first = Join("", session_ms);
    EXPECT_TRUE(first->has_value());
    EXPECT_EQ((*first)->error_code, Code(ErrorCode::kMemberIdRequired));
    const std::string id = (*first)->member_id;
    return {id, Join(id, session_ms)};
  }
  std::shared_ptr<std::optional<SyncGroupResponse>> Sync(
      const std::string& member_id, int32_t generation,
      std::vector<protocol::SyncGroupRequest::Assignment> assignments = {}) {
    protocol::SyncGroupRequest req;
    req.group_id = "g";
    req.member_id = member_id;
    req.generation_id = generation;
    req.assignments = std::move(assignments);
    auto slot = std::make_shared<std::optional<SyncGroupResponse>>();
    rebalance_.Sync(group_, req, [slot](SyncGroupResponse r) { *slot = std::move(r); });
    return slot;
  }
  void Advance(int64_t ms) {
    clock_.Advance(ms);
    rebalance_.RunTimers(group_, clock_.MonotonicMs());
  }
  // The last group metadata record persisted.
  GroupMetadataValue LastPersisted() {
    EXPECT_FALSE(persisted_.empty());
    return DecodeGroupMetadataValue(persisted_.back().value.value()).value();
  }

  CoordinatorConfig config_;
  ManualClock clock_{1'000'000};
  std::vector<CoordinatorRecord> persisted_;
  bool refuse_persist_ = false;
  ClassicGroup group_{"g", clock_.NowMs()};
  ClassicRebalance rebalance_{config_, &clock_,
                              [this](const ClassicGroup&, const std::vector<CoordinatorRecord>& r) {
                                if (refuse_persist_) {
                                  return Status(MakeError(Errc::kUnavailable, "not the leader"));
                                }
                                persisted_.insert(persisted_.end(), r.begin(), r.end());
                                return Status::Ok();
                              }};
};

// Two members join within the initial delay: one generation with both, the
// leader told the members, its assignment persisted and handed to each.
TEST_F(ClassicRebalanceTest, TheInitialRebalanceWaitsForMembersThenAssigns) {
  auto [a, join_a] = JoinNew();
  auto [b, join_b] = JoinNew();
  EXPECT_FALSE(join_a->has_value());  // parked: the initial delay runs
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
  Advance(config_.initial_rebalance_delay_ms);
  EXPECT_FALSE(join_a->has_value());  // b came meanwhile: the delay runs once more
  Advance(config_.initial_rebalance_delay_ms);
  ASSERT_TRUE(join_a->has_value() && join_b->has_value());
  EXPECT_EQ((*join_a)->error_code, 0);
  EXPECT_EQ((*join_a)->generation_id, 1);
  EXPECT_EQ((*join_a)->protocol_name, "range");
  const std::string leader = (*join_a)->leader;
  EXPECT_TRUE(leader == a || leader == b);
  const auto& leader_answer = leader == a ? **join_a : **join_b;
  const auto& other_answer = leader == a ? **join_b : **join_a;
  EXPECT_EQ(leader_answer.members.size(), 2u);
  EXPECT_TRUE(other_answer.members.empty());
  EXPECT_EQ(group_.state(), GroupState::kCompletingRebalance);

  const std::string follower = leader == a ? b : a;
  auto sync_follower = Sync(follower, 1);
  EXPECT_FALSE(sync_follower->has_value());  // waits for the leader's assignment
  auto sync_leader = Sync(leader, 1, {{leader, Bytes{7}}, {follower, Bytes{8, 9}}});
  ASSERT_TRUE(sync_leader->has_value() && sync_follower->has_value());
  EXPECT_EQ((*sync_leader)->assignment, Bytes{7});
  EXPECT_EQ((*sync_follower)->assignment, (Bytes{8, 9}));
  EXPECT_EQ(group_.state(), GroupState::kStable);

  GroupMetadataValue stored = LastPersisted();
  EXPECT_EQ(stored.generation, 1);
  EXPECT_EQ(stored.leader, leader);
  ASSERT_EQ(stored.members.size(), 2u);
  for (const auto& m : stored.members) {
    EXPECT_EQ(m.assignment, m.member_id == leader ? Bytes{7} : (Bytes{8, 9}));
  }
}

// A member whose session runs out is removed and the rest rebalance.
TEST_F(ClassicRebalanceTest, AMemberWhoseSessionExpiresIsRemovedAndTheGroupRebalances) {
  auto [a, join_a] = JoinNew(6'000);
  auto [b, join_b] = JoinNew(60'000);
  Advance(config_.initial_rebalance_delay_ms);
  Advance(config_.initial_rebalance_delay_ms);
  ASSERT_TRUE(join_a->has_value());
  const std::string leader = (*join_a)->leader;
  Sync(leader, 1, {{a, Bytes{1}}, {b, Bytes{2}}});
  Sync(leader == a ? b : a, 1);
  ASSERT_EQ(group_.state(), GroupState::kStable);

  protocol::HeartbeatRequest hb;
  hb.group_id = "g";
  hb.member_id = b;
  hb.generation_id = 1;
  Advance(5'000);
  EXPECT_EQ(rebalance_.Heartbeat(group_, hb).error_code, 0);  // b keeps its session
  Advance(2'000);                                             // a's 6 s have passed
  EXPECT_FALSE(group_.HasMember(a));
  EXPECT_TRUE(group_.HasMember(b));
  EXPECT_EQ(group_.state(), GroupState::kPreparingRebalance);
  EXPECT_EQ(rebalance_.Heartbeat(group_, hb).error_code, Code(ErrorCode::kRebalanceInProgress));
}

// The leader's assignment cannot be stored (its offsets partition moved):
// every member is told COORDINATOR_NOT_AVAILABLE and no assignment is kept.
TEST_F(ClassicRebalanceTest, AnAssignmentThatCannotBeStoredIsGivenToNobody) {
  auto [a, join_a] = JoinNew();
  Advance(config_.initial_rebalance_delay_ms);
  ASSERT_TRUE(join_a->has_value());
  refuse_persist_ = true;
  const size_t stored_before = persisted_.size();
  auto sync = Sync(a, 1, {{a, Bytes{5}}});
  ASSERT_TRUE(sync->has_value());
  EXPECT_EQ((*sync)->error_code, Code(ErrorCode::kCoordinatorNotAvailable));
  EXPECT_TRUE((*sync)->assignment.empty());
  EXPECT_EQ(persisted_.size(), stored_before);
  EXPECT_NE(group_.state(), GroupState::kStable);
}

TEST_F(ClassicRebalanceTest, LeavingMembersAreAnsweredPerMember) {
  auto [a, join_a] = JoinNew();
  Advance(config_.initial_rebalance_delay_ms);
  std::vector<protocol::LeaveGroupRequest::Member> leaving(2);
  leaving[0].member_id = a;
  leaving[1].member_id = "nobody";
  auto resp = rebalance_.Leave(&group_, leaving);
  ASSERT_EQ(resp.members.size(), 2u);
  EXPECT_EQ(resp.members[0].error_code, 0);
  EXPECT_EQ(resp.members[1].error_code, Code(ErrorCode::kUnknownMemberId));
  EXPECT_FALSE(group_.HasMember(a));
  auto gone = rebalance_.Leave(nullptr, leaving);  // no such group
  EXPECT_EQ(gone.members[0].error_code, Code(ErrorCode::kUnknownMemberId));
}

}  // namespace
}  // namespace strata::coordinator
