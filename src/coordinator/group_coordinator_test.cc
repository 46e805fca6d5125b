// GroupCoordinator state machine: joins, syncs, rebalances, timeouts, static
// membership, protocol checks, and generation fencing of commits.
#include "coordinator/group_coordinator.h"

#include <gtest/gtest.h>

#include "coordinator/coordinator_test_util.h"

namespace strata::coordinator {
namespace {

using protocol::ErrorCode;
using testing::CoordinatorTest;
using testing::JoinOptions;
using testing::JoinSlot;
using testing::Protocols;
using testing::Subscription;

Bytes B(const std::string& s) { return Bytes(s.begin(), s.end()); }

TEST_F(CoordinatorTest, ThreeMembersJoinWithInitialDelayThenSync) {
  config_.initial_rebalance_delay_ms = 3000;
  coord_ = Make();
  JoinOptions o;
  o.version = 3;
  JoinSlot j1 = Join("g", o), j2 = Join("g", o), j3 = Join("g", o);
  EXPECT_FALSE(j1->has_value() || j2->has_value() || j3->has_value());
  EXPECT_EQ(coord_->DescribeGroup("g").group_state, "PreparingRebalance");
  // Members kept arriving during the first delay: it is extended once.
  clock_.Advance(3000);
  coord_->Tick();
  EXPECT_FALSE(j1->has_value());
  clock_.Advance(3000);
  coord_->Tick();
  ASSERT_TRUE(j1->has_value() && j2->has_value() && j3->has_value());
  const auto& leader = **j1;
  EXPECT_EQ(leader.error_code, 0);
  EXPECT_EQ(leader.generation_id, 1);
  EXPECT_EQ(leader.leader, leader.member_id);  // the first member to join leads
  EXPECT_EQ(leader.protocol_name, "range");
  EXPECT_EQ(leader.protocol_type, "consumer");
  EXPECT_EQ(leader.member_id.rfind("client-", 0), 0u);
  ASSERT_EQ(leader.members.size(), 3u);
  for (const auto& m : leader.members) EXPECT_EQ(m.metadata, Subscription({"topic-a"}));
  for (const auto& f : {j2, j3}) {
    EXPECT_EQ((*f)->generation_id, 1);
    EXPECT_EQ((*f)->leader, leader.member_id);
    EXPECT_TRUE((*f)->members.empty());
  }
  EXPECT_EQ(coord_->DescribeGroup("g").group_state, "CompletingRebalance");

  auto s2 = Sync("g", (*j2)->member_id, 1);
  auto s3 = Sync("g", (*j3)->member_id, 1);
  EXPECT_FALSE(s2->has_value() || s3->has_value());  // followers wait for the leader
  auto s1 =
      Sync("g", leader.member_id, 1,
           {{leader.member_id, B("a1")}, {(*j2)->member_id, B("a2")}, {(*j3)->member_id, B("a3")}});
  ASSERT_TRUE(s1->has_value() && s2->has_value() && s3->has_value());
  EXPECT_EQ((*s1)->assignment, B("a1"));
  EXPECT_EQ((*s2)->assignment, B("a2"));
  EXPECT_EQ((*s3)->assignment, B("a3"));
  EXPECT_EQ((*s2)->protocol_name, "range");
  auto d = coord_->DescribeGroup("g");
  EXPECT_EQ(d.group_state, "Stable");
  EXPECT_EQ(d.protocol_data, "range");
  ASSERT_EQ(d.members.size(), 3u);
  for (const auto& m : d.members) {
    EXPECT_EQ(m.client_host, "/127.0.0.1");
    EXPECT_EQ(m.member_metadata, Subscription({"topic-a"}));
    EXPECT_EQ(m.member_assignment.size(), 2u);
  }
  EXPECT_EQ(Heartbeat("g", (*j2)->member_id, 1), 0);
  EXPECT_EQ(Heartbeat("g", (*j2)->member_id, 0), Code(ErrorCode::kIllegalGeneration));
  EXPECT_EQ(Heartbeat("g", "nobody", 1), Code(ErrorCode::kUnknownMemberId));
}

TEST_F(CoordinatorTest, MemberIdRequiredFromV4) {
  JoinOptions o;
  o.version = 4;
  JoinSlot first = Join("g", o);
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->error_code, Code(ErrorCode::kMemberIdRequired));
  std::string id = (*first)->member_id;
  EXPECT_EQ(id.rfind("client-", 0), 0u);
  EXPECT_EQ(coord_->DescribeGroup("g").group_state, "Empty");
  o.member_id = id;
  JoinSlot second = Join("g", o);
  TickUntil({second});
  EXPECT_EQ((*second)->error_code, 0);
  EXPECT_EQ((*second)->member_id, id);
  EXPECT_EQ((*second)->leader, id);
  EXPECT_EQ((*second)->generation_id, 1);
  // A member id the group never issued.
  o.member_id = "made-up";
  EXPECT_EQ((*Join("g", o))->error_code, Code(ErrorCode::kUnknownMemberId));
  EXPECT_EQ((*Join("no-such-group", o))->error_code, Code(ErrorCode::kUnknownMemberId));
}

TEST_F(CoordinatorTest, PendingMemberExpiresAfterSessionTimeout) {
  JoinOptions o;
  o.version = 4;
  o.session_ms = 2000;
  std::string id = (*Join("g", o))->member_id;
  clock_.Advance(2001);
  coord_->Tick();
  o.member_id = id;
  EXPECT_EQ((*Join("g", o))->error_code, Code(ErrorCode::kUnknownMemberId));
}

TEST_F(CoordinatorTest, RejoinRequestsValidation) {
  JoinOptions o;
  o.session_ms = 500;  // below group.min.session.timeout.ms
  EXPECT_EQ((*Join("g", o))->error_code, Code(ErrorCode::kInvalidSessionTimeout));
  o.session_ms = 10000;
  EXPECT_EQ((*Join("", o))->error_code, Code(ErrorCode::kInvalidGroupId));
  o.protocols.clear();
  EXPECT_EQ((*Join("g", o))->error_code, Code(ErrorCode::kInconsistentGroupProtocol));
}

TEST_F(CoordinatorTest, LeaderLeavesAndRemainingMemberLeads) {
  auto g = StableGroup("g", 2);
  const std::string leader = g.members[0], follower = g.members[1];
  auto left = coord_->LeaveGroup("g", {{leader, std::nullopt, std::nullopt}});
  ASSERT_EQ(left.members.size(), 1u);
  EXPECT_EQ(left.members[0].error_code, 0);
  EXPECT_EQ(coord_->DescribeGroup("g").group_state, "PreparingRebalance");
  EXPECT_EQ(Heartbeat("g", follower, g.generation), Code(ErrorCode::kRebalanceInProgress));
  JoinOptions o;
  o.member_id = follower;
  JoinSlot rejoin = Join("g", o);
  ASSERT_TRUE(rejoin->has_value());  // everyone left has rejoined: completes at once
  EXPECT_EQ((*rejoin)->generation_id, g.generation + 1);
  EXPECT_EQ((*rejoin)->leader, follower);
  EXPECT_EQ((*rejoin)->members.size(), 1u);
  // Leaving twice, or with an unknown id.
  auto again = coord_->LeaveGroup("g", {{leader, std::nullopt, std::nullopt}});
  EXPECT_EQ(again.members[0].error_code, Code(ErrorCode::kUnknownMemberId));
  auto missing = coord_->LeaveGroup("nope", {{"x", std::nullopt, std::nullopt}});
  EXPECT_EQ(missing.members[0].error_code, Code(ErrorCode::kUnknownMemberId));
}

TEST_F(CoordinatorTest, RebalanceTimeoutRemovesMembersThatDidNotRejoin) {
  JoinOptions long_session;
  long_session.session_ms = 60000;  // outlives the rebalance timeout
  auto g = StableGroup("g", 2, long_session);
  JoinOptions o;
  o.version = 3;
  JoinSlot newcomer = Join("g", o);
  EXPECT_FALSE(newcomer->has_value());
  EXPECT_EQ(Heartbeat("g", g.members[0], g.generation), Code(ErrorCode::kRebalanceInProgress));
  o.member_id = g.members[0];
  JoinSlot rejoined = Join("g", o);
  EXPECT_FALSE(rejoined->has_value());  // members[1] has not rejoined yet
  clock_.Advance(29999);
  coord_->Tick();
  EXPECT_FALSE(rejoined->has_value());
  clock_.Advance(1);
  coord_->Tick();
  ASSERT_TRUE(rejoined->has_value() && newcomer->has_value());
  EXPECT_EQ((*rejoined)->generation_id, g.generation + 1);
  EXPECT_EQ((*rejoined)->members.size(), 2u);  // the leader learns who is left
  EXPECT_EQ(Heartbeat("g", g.members[1], g.generation), Code(ErrorCode::kUnknownMemberId));
}

TEST_F(CoordinatorTest, SessionExpiryRemovesMemberAndRebalances) {
  auto g = StableGroup("g", 2);
  clock_.Advance(6000);
  EXPECT_EQ(Heartbeat("g", g.members[0], g.generation), 0);
  clock_.Advance(3999);
  coord_->Tick();
  EXPECT_EQ(coord_->DescribeGroup("g").group_state, "Stable");
  clock_.Advance(1);  // members[1] last heard of 10000 ms ago
  coord_->Tick();
  auto d = coord_->DescribeGroup("g");
  EXPECT_EQ(d.group_state, "PreparingRebalance");
  ASSERT_EQ(d.members.size(), 1u);
  EXPECT_EQ(d.members[0].member_id, g.members[0]);
  EXPECT_EQ(Heartbeat("g", g.members[0], g.generation), Code(ErrorCode::kRebalanceInProgress));
  JoinOptions o;
  o.member_id = g.members[0];
  JoinSlot rejoin = Join("g", o);
  ASSERT_TRUE(rejoin->has_value());
  EXPECT_EQ((*rejoin)->generation_id, g.generation + 1);
  EXPECT_EQ((*rejoin)->members.size(), 1u);
}

TEST_F(CoordinatorTest, LeaderThatNeverSyncsIsRemovedAfterRebalanceTimeout) {
  JoinOptions o;
  o.version = 3;
  JoinSlot a = Join("g", o), b = Join("g", o);
  TickUntil({a, b});
  const std::string follower = (*a)->member_id == (*a)->leader ? (*b)->member_id : (*a)->member_id;
  auto s = Sync("g", follower, 1);
  EXPECT_FALSE(s->has_value());
  clock_.Advance(30000);
  coord_->Tick();
  ASSERT_TRUE(s->has_value());
  EXPECT_EQ((*s)->error_code, Code(ErrorCode::kRebalanceInProgress));
  auto d = coord_->DescribeGroup("g");
  EXPECT_EQ(d.group_state, "PreparingRebalance");
  ASSERT_EQ(d.members.size(), 1u);
  EXPECT_EQ(d.members[0].member_id, follower);
}

TEST_F(CoordinatorTest, StaticMemberReplacesItsOldMemberId) {
  JoinOptions o;
  o.instance = "instance-1";
  auto g = StableGroup("g", 1, o);
  const std::string old_id = g.members[0];
  EXPECT_EQ(old_id.rfind("instance-1-", 0), 0u);
  // Restarted with no member id: takes over without a rebalance.
  JoinOptions again = o;
  again.version = 5;
  JoinSlot j = Join("g", again);
  ASSERT_TRUE(j->has_value());
  EXPECT_EQ((*j)->error_code, 0);
  const std::string new_id = (*j)->member_id;
  EXPECT_NE(new_id, old_id);
  EXPECT_EQ((*j)->generation_id, g.generation);
  EXPECT_EQ((*j)->leader, old_id);  // pre-v9 leaders must not reassign
  EXPECT_EQ(coord_->DescribeGroup("g").group_state, "Stable");
  EXPECT_EQ(Heartbeat("g", old_id, g.generation, "instance-1"), Code(ErrorCode::kFencedInstanceId));
  EXPECT_EQ(Heartbeat("g", new_id, g.generation, "instance-1"), 0);
  auto s = Sync("g", new_id, g.generation, {}, "instance-1");
  ASSERT_TRUE(s->has_value());
  EXPECT_EQ((*s)->assignment, B("assign-0"));  // assignment kept
  // v9: the static leader learns the members but skips the assignment.
  again.version = 9;
  JoinSlot j9 = Join("g", again);
  ASSERT_TRUE(j9->has_value());
  EXPECT_EQ((*j9)->leader, (*j9)->member_id);
  EXPECT_TRUE((*j9)->skip_assignment);
  EXPECT_EQ((*j9)->members.size(), 1u);
  EXPECT_EQ(Heartbeat("g", new_id, g.generation, "instance-1"), Code(ErrorCode::kFencedInstanceId));
}

TEST_F(CoordinatorTest, StaticMembersSurviveRebalanceTimeoutAndParkedDuplicatesAreFenced) {
  JoinOptions st, dyn;
  st.instance = "s1";
  st.version = dyn.version = 3;
  JoinSlot js = Join("g", st), jd = Join("g", dyn);
  TickUntil({js, jd});
  const std::string s_id = (*js)->member_id, d_id = (*jd)->member_id;
  const std::string leader = (*js)->leader;
  Sync("g", leader == s_id ? d_id : s_id, 1);
  Sync("g", leader, 1, {{s_id, B("s")}, {d_id, B("d")}},
       leader == s_id ? std::optional<std::string>("s1") : std::nullopt);
  ASSERT_EQ(coord_->DescribeGroup("g").group_state, "Stable");

  JoinSlot newcomer = Join("g", dyn);  // rebalance; only the dynamic member rejoins
  JoinOptions r;
  r.member_id = d_id;
  JoinSlot jd2 = Join("g", r);
  clock_.Advance(30000);
  coord_->Tick();
  ASSERT_TRUE(jd2->has_value() && newcomer->has_value());
  EXPECT_EQ((*jd2)->generation_id, 2);
  auto d = coord_->DescribeGroup("g");
  EXPECT_EQ(d.members.size(), 3u);  // the static member is kept
  EXPECT_EQ(Heartbeat("g", s_id, 1, "s1"), Code(ErrorCode::kIllegalGeneration));

  // The static member rejoins (parked), then a second process with the same
  // instance id shows up: the parked request is fenced.
  JoinOptions rs = st;
  rs.member_id = s_id;
  rs.version = 5;
  JoinSlot current = Join("g", rs);  // same metadata while CompletingRebalance: answered at once
  ASSERT_TRUE(current->has_value());
  EXPECT_EQ((*current)->generation_id, 2);
  Join("g", dyn);  // yet another member: a new rebalance
  JoinSlot parked = Join("g", rs);
  EXPECT_FALSE(parked->has_value());
  JoinOptions dup = st;
  dup.version = 5;
  JoinSlot takeover = Join("g", dup);
  ASSERT_TRUE(parked->has_value());
  EXPECT_EQ((*parked)->error_code, Code(ErrorCode::kFencedInstanceId));
  EXPECT_FALSE(takeover->has_value());  // it joins the ongoing rebalance instead
}

TEST_F(CoordinatorTest, InconsistentProtocols) {
  auto g = StableGroup("g", 1);
  JoinOptions other;
  other.protocol_type = "connect";
  EXPECT_EQ((*Join("g", other))->error_code, Code(ErrorCode::kInconsistentGroupProtocol));
  JoinOptions no_overlap;
  no_overlap.protocols = Protocols({"sticky"});
  EXPECT_EQ((*Join("g", no_overlap))->error_code, Code(ErrorCode::kInconsistentGroupProtocol));
  auto s = Sync("g", g.members[0], g.generation, {}, std::nullopt, "roundrobin");
  EXPECT_EQ((*s)->error_code, Code(ErrorCode::kInconsistentGroupProtocol));
  auto ok = Sync("g", g.members[0], g.generation, {}, std::nullopt, "range");
  EXPECT_EQ((*ok)->error_code, 0);
  EXPECT_EQ((*Sync("g", g.members[0], g.generation + 1))->error_code,
            Code(ErrorCode::kIllegalGeneration));
  EXPECT_EQ((*Sync("none", "x", 1))->error_code, Code(ErrorCode::kUnknownMemberId));
}

TEST_F(CoordinatorTest, ProtocolSelectionByVotesThenLeaderPreference) {
  JoinOptions a, b;
  a.version = b.version = 3;
  a.protocols = Protocols({"range", "roundrobin"});
  b.protocols = Protocols({"roundrobin", "range"});
  JoinSlot ja = Join("tie", a), jb = Join("tie", b);
  TickUntil({ja, jb});
  EXPECT_EQ((*ja)->protocol_name, "range");  // 1-1: the leader's first choice

  JoinOptions c = b;
  JoinSlot x = Join("votes", a), y = Join("votes", b), z = Join("votes", c);
  TickUntil({x, y, z});
  EXPECT_EQ((*x)->protocol_name, "roundrobin");  // 2-1

  JoinOptions only = a;
  only.protocols = Protocols({"roundrobin"});
  JoinSlot p = Join("common", a), q = Join("common", only);
  TickUntil({p, q});
  EXPECT_EQ((*p)->protocol_name, "roundrobin");  // the only one all support
}

TEST_F(CoordinatorTest, GroupMaxSize) {
  config_.max_group_size = 2;
  coord_ = Make();
  JoinOptions o;
  o.version = 3;
  JoinSlot a = Join("g", o), b = Join("g", o), c = Join("g", o);
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ((*c)->error_code, Code(ErrorCode::kGroupMaxSizeReached));
  TickUntil({a, b});
  EXPECT_EQ((*a)->members.size() + (*b)->members.size(), 2u);
}

TEST_F(CoordinatorTest, CommitsAreFencedByGeneration) {
  auto g = StableGroup("g", 2);
  const std::string m = g.members[1];
  EXPECT_EQ(Commit("g", g.generation - 1, m, "t", {{0, 5}}).topics[0].partitions[0].error_code,
            Code(ErrorCode::kIllegalGeneration));
  EXPECT_EQ(Commit("g", g.generation, "stranger", "t", {{0, 5}}).topics[0].partitions[0].error_code,
            Code(ErrorCode::kUnknownMemberId));
  EXPECT_EQ(Commit("g", -1, "", "t", {{0, 5}}).topics[0].partitions[0].error_code,
            Code(ErrorCode::kUnknownMemberId));  // admin commits need an empty group
  auto ok = Commit("g", g.generation, m, "t", {{0, 10}, {1, 20}});
  EXPECT_EQ(ok.topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(ok.topics[0].partitions[1].error_code, 0);
  EXPECT_EQ(Committed("g", "t", 0), 10);
  EXPECT_EQ(Committed("g", "t", 1), 20);
  EXPECT_EQ(Committed("g", "t", 2), -1);

  // A rebalance starts: the old generation may still commit...
  JoinOptions o;
  o.version = 3;
  JoinSlot newcomer = Join("g", o);
  EXPECT_EQ(Commit("g", g.generation, m, "t", {{0, 11}}).topics[0].partitions[0].error_code, 0);
  // ...but once the join phase is over, not before the assignment is synced.
  for (const auto& id : g.members) {
    JoinOptions r;
    r.member_id = id;
    Join("g", r);
  }
  ASSERT_TRUE(newcomer->has_value());
  int32_t next = (*newcomer)->generation_id;
  EXPECT_EQ(Commit("g", next, m, "t", {{0, 12}}).topics[0].partitions[0].error_code,
            Code(ErrorCode::kRebalanceInProgress));
  EXPECT_EQ(Commit("g", g.generation, m, "t", {{0, 12}}).topics[0].partitions[0].error_code,
            Code(ErrorCode::kIllegalGeneration));
  EXPECT_EQ(Committed("g", "t", 0), 11);
}

TEST_F(CoordinatorTest, SimpleGroupCommitsAndMissingGroups) {
  EXPECT_EQ(Commit("simple", -1, "", "t", {{0, 7}}).topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(Committed("simple", "t", 0), 7);
  EXPECT_EQ(coord_->DescribeGroup("simple").group_state, "Empty");
  EXPECT_EQ(Commit("missing", 3, "m", "t", {{0, 1}}, 8).topics[0].partitions[0].error_code,
            Code(ErrorCode::kIllegalGeneration));
  EXPECT_EQ(Commit("missing", 3, "m", "t", {{0, 1}}, 9).topics[0].partitions[0].error_code,
            Code(ErrorCode::kGroupIdNotFound));
  EXPECT_EQ(Committed("missing", "t", 0), -1);
}

TEST_F(CoordinatorTest, OffsetMetadataLimitAndNullMetadata) {
  protocol::OffsetCommitRequest req;
  req.group_id = "g";
  auto& t = req.topics.emplace_back();
  t.name = "t";
  t.partitions.push_back({0, 100, 3, -1, std::string(4097, 'x')});
  t.partitions.push_back({1, 200, 3, -1, std::string(4096, 'y')});
  t.partitions.push_back({2, 300, -1, -1, std::nullopt});
  auto resp = coord_->CommitOffsets(req, 8);
  EXPECT_EQ(resp.topics[0].partitions[0].error_code, Code(ErrorCode::kOffsetMetadataTooLarge));
  EXPECT_EQ(resp.topics[0].partitions[1].error_code, 0);
  EXPECT_EQ(resp.topics[0].partitions[2].error_code, 0);
  auto all = coord_->FetchOffsets("g", std::nullopt);
  ASSERT_EQ(all.topics.size(), 1u);
  ASSERT_EQ(all.topics[0].partitions.size(), 2u);
  EXPECT_EQ(all.topics[0].partitions[0].partition_index, 1);
  EXPECT_EQ(all.topics[0].partitions[0].committed_offset, 200);
  EXPECT_EQ(all.topics[0].partitions[0].committed_leader_epoch, 3);
  EXPECT_EQ(all.topics[0].partitions[0].metadata, std::string(4096, 'y'));
  EXPECT_EQ(all.topics[0].partitions[1].metadata, "");
  EXPECT_EQ(all.topics[0].partitions[1].committed_leader_epoch, -1);
  std::vector<protocol::OffsetFetchRequest::Topic> want{{"t", {0}}, {"u", {4}}};
  auto some = coord_->FetchOffsets("g", want);
  EXPECT_EQ(some.topics[0].partitions[0].committed_offset, -1);
  EXPECT_EQ(some.topics[0].partitions[0].metadata, "");
  EXPECT_EQ(some.topics[1].partitions[0].committed_offset, -1);
  EXPECT_TRUE(coord_->FetchOffsets("nobody", std::nullopt).topics.empty());
}

TEST_F(CoordinatorTest, OffsetDeleteAndGroupDelete) {
  auto g = StableGroup("g", 1);
  ASSERT_EQ(Commit("g", g.generation, g.members[0], "topic-a", {{0, 1}})
                .topics[0]
                .partitions[0]
                .error_code,
            0);
  ASSERT_EQ(Commit("g", g.generation, g.members[0], "topic-b", {{0, 2}})
                .topics[0]
                .partitions[0]
                .error_code,
            0);
  protocol::OffsetDeleteRequest del{"g", {{"topic-a", {{0}}}, {"topic-b", {{0}}}}};
  auto r = coord_->DeleteOffsets(del);
  EXPECT_EQ(r.error_code, 0);
  EXPECT_EQ(r.topics[0].partitions[0].error_code, Code(ErrorCode::kGroupSubscribedToTopic));
  EXPECT_EQ(r.topics[1].partitions[0].error_code, 0);
  EXPECT_EQ(Committed("g", "topic-a", 0), 1);
  EXPECT_EQ(Committed("g", "topic-b", 0), -1);
  EXPECT_EQ(coord_->DeleteOffsets({"nope", {}}).error_code, Code(ErrorCode::kGroupIdNotFound));

  EXPECT_EQ(coord_->DeleteGroup("g").error_code, Code(ErrorCode::kNonEmptyGroup));
  EXPECT_EQ(coord_->DeleteGroup("nope").error_code, Code(ErrorCode::kGroupIdNotFound));
  coord_->LeaveGroup("g", {{g.members[0], std::nullopt, std::nullopt}});
  EXPECT_EQ(coord_->DescribeGroup("g").group_state, "Empty");
  EXPECT_EQ(coord_->DeleteGroup("g").error_code, 0);
  EXPECT_EQ(coord_->DescribeGroup("g").group_state, "Dead");
  EXPECT_EQ(Committed("g", "topic-a", 0), -1);
  EXPECT_EQ(coord_->DeleteGroup("g").error_code, Code(ErrorCode::kGroupIdNotFound));
}

TEST_F(CoordinatorTest, OffsetDeleteOnActiveNonConsumerGroupIsRefused) {
  JoinOptions o;
  o.protocol_type = "connect";
  auto g = StableGroup("g", 1, o);
  EXPECT_EQ(coord_->DeleteOffsets({"g", {{"t", {{0}}}}}).error_code,
            Code(ErrorCode::kNonEmptyGroup));
}

TEST_F(CoordinatorTest, ListGroupsWithStateFilter) {
  StableGroup("active", 1);
  Commit("standalone", -1, "", "t", {{0, 1}});
  auto all = coord_->ListGroups({});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].group_id, "active");
  EXPECT_EQ(all[0].protocol_type, "consumer");
  EXPECT_EQ(all[0].group_state, "Stable");
  EXPECT_EQ(all[1].group_id, "standalone");
  EXPECT_EQ(all[1].protocol_type, "");
  EXPECT_EQ(all[1].group_state, "Empty");
  auto stable = coord_->ListGroups({"stable"});
  ASSERT_EQ(stable.size(), 1u);
  EXPECT_EQ(stable[0].group_id, "active");
  auto empty = coord_->ListGroups({"Empty", "Dead"});
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0].group_id, "standalone");
}

}  // namespace
}  // namespace strata::coordinator
