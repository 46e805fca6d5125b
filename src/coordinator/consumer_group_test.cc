#include "coordinator/consumer_group.h"

#include <gtest/gtest.h>

#include "coordinator/topic_catalog_test_util.h"

namespace strata::coordinator {
namespace {

using protocol::ConsumerGroupHeartbeatRequest;
using protocol::ConsumerGroupHeartbeatResponse;
using protocol::ErrorCode;

TopicId Tid(uint8_t n) {
  TopicId id{};
  id[15] = n;
  return id;
}

// A coordinator in miniature: each heartbeat's records are encoded into a
// log (as written to __consumer_offsets), decoded back and replayed.
class Harness {
 public:
  Harness() { topics_["orders"] = {Tid(1), 4}; }

  TopicCatalog Catalog() { return testing::MapCatalog(topics_); }

  void Apply(const std::vector<ConsumerGroupRecord>& records) {
    for (const auto& r : records) {
      CoordinatorRecord wire = EncodeConsumerGroupRecord(r);
      std::optional<ByteView> value;
      if (wire.value) value = ByteView(*wire.value);
      auto decoded = DecodeConsumerGroupRecord(ByteView(wire.key), value);
      ASSERT_TRUE(decoded.ok()) << decoded.error().message;
      ASSERT_TRUE(decoded->has_value());
      EXPECT_EQ(**decoded, r);
      ASSERT_TRUE(group.Replay(**decoded).ok());
      log.push_back(std::move(wire));
    }
    CheckNoPartitionHasTwoOwners();
  }

  ConsumerGroupHeartbeatResponse Beat(const ConsumerGroupHeartbeatRequest& req) {
    std::string message;
    ErrorCode e = ValidateHeartbeat(req, 1, config, &message);
    if (e != ErrorCode::kNone) {
      ConsumerGroupHeartbeatResponse r;
      r.error_code = static_cast<int16_t>(e);
      r.error_message = message;
      return r;
    }
    group.ExpireRegexMatches(now);
    ConsumerGroupChange change = req.member_epoch < 0
                                     ? group.Leave(req, Catalog())
                                     : group.Heartbeat(req, ctx, Catalog(), config);
    Apply(change.records);
    if (change.response.error_code == 0 && req.member_epoch >= 0)
      group.ArmTimers(req.member_id, now, config);
    return change.response;
  }

  static ConsumerGroupHeartbeatRequest Join(const std::string& member,
                                            std::vector<std::string> topics = {"orders"}) {
    ConsumerGroupHeartbeatRequest req;
    req.group_id = "g";
    req.member_id = member;
    req.member_epoch = 0;
    req.rebalance_timeout_ms = 300000;
    req.subscribed_topic_names = std::move(topics);
    req.topic_partitions = std::vector<protocol::ConsumerGroupTopicPartitions>{};
    return req;
  }
  static ConsumerGroupHeartbeatRequest Poll(const std::string& member, int32_t epoch,
                                            std::optional<std::set<int32_t>> owned) {
    ConsumerGroupHeartbeatRequest req;
    req.group_id = "g";
    req.member_id = member;
    req.member_epoch = epoch;
    if (owned) {
      req.topic_partitions = std::vector<protocol::ConsumerGroupTopicPartitions>{};
      if (!owned->empty())
        req.topic_partitions->push_back(
            {Tid(1), std::vector<int32_t>(owned->begin(), owned->end())});
    }
    return req;
  }

  // Members' current assignments never overlap, pending revocations counted.
  void CheckNoPartitionHasTwoOwners() {
    std::map<int32_t, std::string> owner;
    for (const auto& [id, m] : group.members()) {
      for (const auto* set : {&m.current.assigned, &m.current.pending_revocation}) {
        auto it = set->find(Tid(1));
        if (it == set->end()) continue;
        for (int32_t p : it->second) {
          auto [o, fresh] = owner.emplace(p, id);
          EXPECT_TRUE(fresh) << "partition " << p << " held by " << o->second << " and " << id;
        }
      }
    }
  }

  ConsumerGroup group{"g"};
  ConsumerGroupConfig config;
  RequestContext ctx{"client", "/127.0.0.1", 1};
  testing::TopicMap topics_;
  std::vector<CoordinatorRecord> log;
  int64_t now = 1000;
};

std::set<int32_t> Partitions(const ConsumerGroupHeartbeatResponse& r) {
  std::set<int32_t> out;
  if (!r.assignment) return out;
  for (const auto& t : *r.assignment) out.insert(t.partitions.begin(), t.partitions.end());
  return out;
}

TEST(ConsumerGroupTest, TheFirstMemberGetsEveryPartitionAtEpochOne) {
  Harness h;
  auto r = h.Beat(Harness::Join("a"));
  ASSERT_EQ(r.error_code, 0) << r.error_message.value_or("");
  EXPECT_EQ(r.member_id, "a");
  EXPECT_EQ(r.member_epoch, 1);
  EXPECT_EQ(r.heartbeat_interval_ms, 5000);
  EXPECT_EQ(Partitions(r), (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(h.group.state(), ConsumerGroupState::kStable);
  // A heartbeat with nothing new: no records, no assignment in the answer.
  const size_t written = h.log.size();
  auto again = h.Beat(Harness::Poll("a", 1, std::nullopt));
  EXPECT_EQ(again.member_epoch, 1);
  EXPECT_FALSE(again.assignment.has_value());
  EXPECT_EQ(h.log.size(), written);
}

TEST(ConsumerGroupTest, ASecondMemberGetsItsShareOnlyAfterTheFirstRevokesIt) {
  Harness h;
  h.Beat(Harness::Join("a"));
  auto b = h.Beat(Harness::Join("b"));
  EXPECT_EQ(b.member_epoch, 2);
  EXPECT_TRUE(Partitions(b).empty());  // a still holds them all
  EXPECT_EQ(h.group.state(), ConsumerGroupState::kReconciling);

  // a is told to give two up; its epoch waits for it.
  auto a = h.Beat(Harness::Poll("a", 1, std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(a.member_epoch, 1);
  const std::set<int32_t> kept = Partitions(a);
  EXPECT_EQ(kept.size(), 2u);
  EXPECT_TRUE(Partitions(h.Beat(Harness::Poll("b", 2, std::set<int32_t>{}))).empty());

  // Revoked: a moves to epoch 2, then b gets the other two.
  a = h.Beat(Harness::Poll("a", 1, kept));
  EXPECT_EQ(a.member_epoch, 2);
  b = h.Beat(Harness::Poll("b", 2, std::set<int32_t>{}));
  std::set<int32_t> all = kept;
  for (int32_t p : Partitions(b)) EXPECT_TRUE(all.insert(p).second);
  EXPECT_EQ(all, (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(h.group.state(), ConsumerGroupState::kStable);
}

TEST(ConsumerGroupTest, EpochsAreFencedButALostAnswerIsForgiven) {
  Harness h;
  h.Beat(Harness::Join("a"));
  EXPECT_EQ(h.Beat(Harness::Poll("a", 7, std::nullopt)).error_code,
            static_cast<int16_t>(ErrorCode::kFencedMemberEpoch));
  EXPECT_EQ(h.Beat(Harness::Poll("z", 1, std::nullopt)).error_code,
            static_cast<int16_t>(ErrorCode::kUnknownMemberId));
  // New partitions move a to epoch 2; an answer lost on the way leaves it
  // speaking at 1, its previous epoch: accepted with owned partitions it
  // was given, fenced without them.
  h.topics_["orders"].second = 6;
  ASSERT_EQ(h.Beat(Harness::Poll("a", 1, std::nullopt)).member_epoch, 2);
  EXPECT_EQ(h.Beat(Harness::Poll("a", 1, std::nullopt)).error_code,
            static_cast<int16_t>(ErrorCode::kFencedMemberEpoch));
  EXPECT_EQ(h.Beat(Harness::Poll("a", 1, std::set<int32_t>{1, 7})).error_code,
            static_cast<int16_t>(ErrorCode::kFencedMemberEpoch));  // 7 was never a's
  auto r = h.Beat(Harness::Poll("a", 1, std::set<int32_t>{1, 5}));
  EXPECT_EQ(r.error_code, 0);
  EXPECT_EQ(r.member_epoch, 2);
}

TEST(ConsumerGroupTest, ALeavingMembersPartitionsGoToTheOthers) {
  Harness h;
  h.Beat(Harness::Join("a"));
  h.Beat(Harness::Join("b"));
  auto a = h.Beat(Harness::Poll("a", 1, std::set<int32_t>{0, 1, 2, 3}));
  h.Beat(Harness::Poll("a", 1, Partitions(a)));
  h.Beat(Harness::Poll("b", 2, std::set<int32_t>{}));
  auto left = h.Beat(Harness::Poll("a", -1, std::set<int32_t>{}));
  EXPECT_EQ(left.member_epoch, -1);
  EXPECT_EQ(h.group.member("a"), nullptr);
  EXPECT_EQ(h.group.group_epoch(), 3);
  auto b = h.Beat(Harness::Poll("b", 2, std::nullopt));
  EXPECT_EQ(b.member_epoch, 3);
  EXPECT_EQ(Partitions(b), (std::set<int32_t>{0, 1, 2, 3}));
}

TEST(ConsumerGroupTest, ASessionThatLapsesIsFencedAndARevocationThatTakesTooLongToo) {
  Harness h;
  h.Beat(Harness::Join("a"));
  h.Beat(Harness::Join("b"));
  h.Beat(Harness::Poll("a", 1, std::set<int32_t>{0, 1, 2, 3}));  // a starts revoking
  EXPECT_TRUE(h.group.Expired(h.now + 1000).empty());
  // a's rebalance timeout is its 300 s; b's session is 45 s.
  h.now += 46000;
  h.Beat(Harness::Poll("a", 1, std::set<int32_t>{0, 1, 2, 3}));  // still revoking
  EXPECT_EQ(h.group.Expired(h.now), (std::vector<std::string>{"b"}));
  h.Apply(h.group.Fence({"b"}, h.Catalog()));
  EXPECT_EQ(h.group.member("b"), nullptr);
  // a heartbeats on but still holds what it was told to revoke.
  h.now += 300000;
  h.Beat(Harness::Poll("a", 1, std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(h.group.Expired(h.now), (std::vector<std::string>{"a"}));
}

TEST(ConsumerGroupTest, AStaticMemberThatStepsOutComesBackUnderANewIdWithItsPartitions) {
  Harness h;
  auto join = Harness::Join("a");
  join.instance_id = "inst-1";
  auto a = h.Beat(join);
  ASSERT_EQ(Partitions(a).size(), 4u);
  auto away = Harness::Poll("a", -2, std::set<int32_t>{});
  away.instance_id = "inst-1";
  EXPECT_EQ(h.Beat(away).member_epoch, -2);
  const int32_t epoch = h.group.group_epoch();

  // It comes back as a new process (a new member id).
  auto rejoin = Harness::Join("a2");
  rejoin.instance_id = "inst-1";
  auto back = h.Beat(rejoin);
  ASSERT_EQ(back.error_code, 0) << back.error_message.value_or("");
  EXPECT_EQ(Partitions(back), (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(h.group.group_epoch(), epoch);  // no rebalance
  EXPECT_EQ(h.group.member("a"), nullptr);
  // A second process with the same instance id while a2 is in: refused.
  auto twin = Harness::Join("a3");
  twin.instance_id = "inst-1";
  EXPECT_EQ(h.Beat(twin).error_code, static_cast<int16_t>(ErrorCode::kUnreleasedInstanceId));
}

TEST(ConsumerGroupTest, ReplayingTheLogRebuildsTheSameGroup) {
  Harness h;
  h.Beat(Harness::Join("a"));
  h.Beat(Harness::Join("b"));
  h.Beat(Harness::Poll("a", 1, std::set<int32_t>{0, 1, 2, 3}));
  ConsumerGroup copy("g");
  for (const auto& wire : h.log) {
    std::optional<ByteView> value;
    if (wire.value) value = ByteView(*wire.value);
    auto r = DecodeConsumerGroupRecord(ByteView(wire.key), value);
    ASSERT_TRUE(r.ok() && r->has_value());
    ASSERT_TRUE(copy.Replay(**r).ok());
  }
  EXPECT_EQ(copy.Describe(h.Catalog(), h.config), h.group.Describe(h.Catalog(), h.config));
  EXPECT_EQ(copy.state(), ConsumerGroupState::kReconciling);
  // Deleting it leaves nothing.
  for (const auto& r : copy.DeleteRecords()) ASSERT_TRUE(copy.Replay(r).ok());
  EXPECT_TRUE(copy.IsGone());
}

TEST(ConsumerGroupTest, RequestsAreCheckedAsKafkaChecksThem) {
  Harness h;
  auto no_rebalance_timeout = Harness::Join("a");
  no_rebalance_timeout.rebalance_timeout_ms = -1;
  EXPECT_EQ(h.Beat(no_rebalance_timeout).error_code,
            static_cast<int16_t>(ErrorCode::kInvalidRequest));
  auto no_id = Harness::Join("");
  EXPECT_EQ(h.Beat(no_id).error_code, static_cast<int16_t>(ErrorCode::kInvalidRequest));
  auto bad_assignor = Harness::Join("a");
  bad_assignor.server_assignor = "sticky";
  EXPECT_EQ(h.Beat(bad_assignor).error_code, static_cast<int16_t>(ErrorCode::kUnsupportedAssignor));
  h.config.max_size = 1;
  h.Beat(Harness::Join("a"));
  EXPECT_EQ(h.Beat(Harness::Join("b")).error_code,
            static_cast<int16_t>(ErrorCode::kGroupMaxSizeReached));
}

TEST(ConsumerGroupTest, ARegularExpressionSubscribesToTopicsMadeLaterToo) {
  Harness h;
  h.topics_["orders-eu"] = {Tid(2), 2};
  h.topics_["payments"] = {Tid(3), 2};
  auto join = Harness::Join("a", {});
  join.subscribed_topic_regex = "orders.*";
  auto r = h.Beat(join);
  ASSERT_EQ(r.error_code, 0) << r.error_message.value_or("");
  std::set<TopicId> topics;
  for (const auto& t : *r.assignment) topics.insert(t.topic_id);
  EXPECT_EQ(topics, (std::set<TopicId>{Tid(1), Tid(2)}));  // not payments
  EXPECT_TRUE(h.group.IsSubscribed("orders-eu"));
  EXPECT_FALSE(h.group.IsSubscribed("payments"));

  // A matching topic made later is matched again once the last match is
  // kRegexRefreshMs old.
  h.topics_["orders-us"] = {Tid(4), 1};
  EXPECT_FALSE(h.Beat(Harness::Poll("a", r.member_epoch, std::nullopt)).assignment.has_value());
  h.now += kRegexRefreshMs;
  auto later = h.Beat(Harness::Poll("a", r.member_epoch, std::nullopt));
  EXPECT_EQ(later.member_epoch, r.member_epoch + 1);
  ASSERT_TRUE(later.assignment.has_value());
  topics.clear();
  for (const auto& t : *later.assignment) topics.insert(t.topic_id);
  EXPECT_EQ(topics, (std::set<TopicId>{Tid(1), Tid(2), Tid(4)}));

  auto bad = Harness::Join("b", {});
  bad.subscribed_topic_regex = "orders(";
  EXPECT_EQ(h.Beat(bad).error_code, static_cast<int16_t>(ErrorCode::kInvalidRegularExpression));
}

TEST(ConsumerGroupTest, AJoinRepeatedBecauseItsAnswerWasLostIsAnsweredAgain) {
  Harness h;
  auto first = h.Beat(Harness::Join("a"));
  auto b = h.Beat(Harness::Join("b"));
  const int32_t epoch = h.group.group_epoch();
  // b's answer was lost: it joins again, owning nothing.
  auto again = h.Beat(Harness::Join("b"));
  EXPECT_EQ(again.error_code, 0);
  EXPECT_EQ(again.member_epoch, b.member_epoch);
  EXPECT_EQ(h.group.group_epoch(), epoch);  // no second rebalance
  EXPECT_TRUE(again.assignment.has_value());
  (void)first;
}

// __consumer_offsets is compacted: a member's latest assignment record may
// come before its latest metadata record in the log.
TEST(ConsumerGroupTest, AnAssignmentReplayedBeforeItsMembersMetadataIsKept) {
  ConsumerGroup g("g");
  MemberAssignment current{3, 2, MemberState::kStable, {{Tid(1), {0, 1}}}, {}};
  ASSERT_TRUE(g.Replay(GroupEpochRecord("g", 3, 0)).ok());
  ASSERT_TRUE(g.Replay(CurrentAssignmentRecord("g", "a", current)).ok());
  ConsumerMemberMetadata md;
  md.client_id = "c";
  md.subscribed_topic_names = {"orders"};
  ASSERT_TRUE(g.Replay(MemberMetadataRecord("g", "a", md)).ok());
  const ConsumerGroupMember* a = g.member("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->current, current);
  EXPECT_EQ(a->metadata, md);
}

TEST(ConsumerGroupTest, NewPartitionsOfASubscribedTopicStartARebalance) {
  Harness h;
  h.Beat(Harness::Join("a"));
  h.topics_["orders"].second = 6;
  auto r = h.Beat(Harness::Poll("a", 1, std::nullopt));
  EXPECT_EQ(r.member_epoch, 2);
  EXPECT_EQ(Partitions(r), (std::set<int32_t>{0, 1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace strata::coordinator
