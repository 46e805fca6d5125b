// The JSON records of cluster metadata: each encodes and decodes back with
// every field set, older records without the optional fields decode to the
// defaults, and malformed values (bad JSON, missing fields, wrong types,
// integers that do not fit) are kCorrupt errors naming the record kind.
#include "cluster/records.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::cluster {
namespace {

std::vector<NodeId> Ids(std::initializer_list<int32_t> ids) {
  std::vector<NodeId> out;
  for (int32_t id : ids) out.emplace_back(id);
  return out;
}

// Expects `r` to be a kCorrupt error whose message starts with `kind`.
template <typename T>
void ExpectCorrupt(const Result<T>& r, const std::string& kind, const std::string& input) {
  ASSERT_FALSE(r.ok()) << kind << " accepted: " << input;
  EXPECT_EQ(r.error().code, Errc::kCorrupt) << input;
  EXPECT_EQ(r.error().message.rfind(kind + " record: ", 0), 0u) << r.error().message;
}

BrokerRegistration FullBroker() {
  BrokerRegistration b;
  b.node_id = NodeId(42);
  b.listeners = {{"PLAINTEXT", "broker-42.example", 9092}, {"INTERNAL", "10.0.0.42", 19092}};
  b.rack = "eu-west-1b";
  b.state = BrokerState::kDraining;
  b.capacity = {{"disk", int64_t{1} << 40}, {"network.in", 125'000'000}};
  b.incarnation = "5f0c2a9e";
  b.clean_shutdown = false;
  b.new_log_dir_epoch = 17;
  b.left_cleanly = true;
  return b;
}

TEST(BrokerRecord, RoundTripsEveryField) {
  BrokerRegistration b = FullBroker();
  auto d = DecodeBroker(EncodeBroker(b));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->node_id, NodeId(42));
  ASSERT_EQ(d->listeners.size(), 2u);
  EXPECT_EQ(d->listeners[0].name, "PLAINTEXT");
  EXPECT_EQ(d->listeners[0].host, "broker-42.example");
  EXPECT_EQ(d->listeners[0].port, 9092);
  EXPECT_EQ(d->listeners[1].name, "INTERNAL");
  EXPECT_EQ(d->listeners[1].host, "10.0.0.42");
  EXPECT_EQ(d->listeners[1].port, 19092);
  EXPECT_EQ(d->rack, "eu-west-1b");
  EXPECT_EQ(d->state, BrokerState::kDraining);
  EXPECT_EQ(d->capacity, (std::map<std::string, int64_t>{{"disk", int64_t{1} << 40},
                                                         {"network.in", 125'000'000}}));
  EXPECT_EQ(d->incarnation, "5f0c2a9e");
  EXPECT_FALSE(d->clean_shutdown);
  EXPECT_EQ(d->new_log_dir_epoch, 17);
  EXPECT_TRUE(d->left_cleanly);
  EXPECT_EQ(*d, b);
}

TEST(BrokerRecord, EveryStateRoundTripsUnderItsDocumentedName) {
  const std::pair<BrokerState, const char*> states[] = {
      {BrokerState::kActive, "active"},
      {BrokerState::kStandby, "standby"},
      {BrokerState::kDraining, "draining"},
      {BrokerState::kFenced, "fenced"},
      {BrokerState::kShuttingDown, "controlled_shutdown"}};
  for (auto [state, name] : states) {
    BrokerRegistration b = FullBroker();
    b.state = state;
    std::string encoded = EncodeBroker(b);
    EXPECT_EQ(nlohmann::json::parse(encoded).at("state"), name);
    auto d = DecodeBroker(encoded);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d->state, state) << name;
    EXPECT_EQ(BrokerStateName(state), std::string(name));
  }
  EXPECT_TRUE(EligibleForLeadership(BrokerState::kActive));
  EXPECT_TRUE(EligibleForLeadership(BrokerState::kStandby));
  EXPECT_TRUE(EligibleForLeadership(BrokerState::kDraining));
  EXPECT_FALSE(EligibleForLeadership(BrokerState::kFenced));
  EXPECT_FALSE(EligibleForLeadership(BrokerState::kShuttingDown));
}

// A registration written before rack, state, capacity, incarnation or the
// clean-shutdown marker existed.
TEST(BrokerRecord, OptionalFieldsDefault) {
  auto d = DecodeBroker(R"({"node_id":3,"listeners":[]})");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->node_id, NodeId(3));
  EXPECT_TRUE(d->listeners.empty());
  EXPECT_EQ(d->rack, "");
  EXPECT_EQ(d->state, BrokerState::kActive);
  EXPECT_TRUE(d->capacity.empty());
  EXPECT_EQ(d->incarnation, "");
  EXPECT_TRUE(d->clean_shutdown);
  EXPECT_FALSE(d->left_cleanly);  // a vanished broker is the cautious reading
  EXPECT_EQ(d->new_log_dir_epoch, -1);
}

TEST(BrokerRecord, MalformedIsCorrupt) {
  const std::string ok_listener = R"([{"name":"P","host":"h","port":1}])";
  for (const std::string& bad : std::vector<std::string>{
           "",
           "{",
           "null",
           "[]",
           "42",
           R"("broker")",
           R"({"node_id":1,"listeners":[]} x)",
           R"({"listeners":[]})",                       // no node_id
           R"({"node_id":1})",                          // no listeners
           R"({"node_id":"1","listeners":[]})",         // node_id a string
           R"({"node_id":1.5,"listeners":[]})",         // a fraction
           R"({"node_id":true,"listeners":[]})",        // a boolean
           R"({"node_id":4294967297,"listeners":[]})",  // beyond int32
           R"({"node_id":1,"listeners":5})",            // not an array
           R"({"node_id":1,"listeners":{"name":"P","host":"h","port":1}})",
           R"({"node_id":1,"listeners":[{"name":"P","host":"h"}]})",  // no port
           R"({"node_id":1,"listeners":[{"host":"h","port":1}]})",    // no name
           R"({"node_id":1,"listeners":[{"name":"P","host":"h","port":"1"}]})",
           R"({"node_id":1,"listeners":[{"name":"P","host":7,"port":1}]})",
           R"({"node_id":1,"listeners":[{"name":"P","host":"h","port":70000.5}]})",
           R"({"node_id":1,"listeners":[],"state":"zombie"})",
           R"({"node_id":1,"listeners":[],"state":2})",
           R"({"node_id":1,"listeners":[],"rack":5})",
           R"({"node_id":1,"listeners":[],"capacity":{"disk":"1T"}})",
           R"({"node_id":1,"listeners":[],"capacity":{"disk":1.5}})",
           R"({"node_id":1,"listeners":[],"capacity":[1,2]})",
           R"({"node_id":1,"listeners":[],"incarnation":12})",
           R"({"node_id":1,"listeners":[],"clean_shutdown":"yes"})",
       }) {
    ExpectCorrupt(DecodeBroker(bad), "broker", bad);
  }
  ASSERT_TRUE(DecodeBroker(R"({"node_id":1,"listeners":)" + ok_listener + "}").ok());
}

TEST(BrokerRecord, ErrorsNameTheField) {
  auto missing = DecodeBroker(R"({"listeners":[]})");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("node_id"), std::string::npos) << missing.error().message;
  auto state = DecodeBroker(R"({"node_id":1,"listeners":[],"state":"zombie"})");
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.error().message, "broker record: unknown state 'zombie'");
  auto wrong = DecodeBroker(R"({"node_id":1.5,"listeners":[]})");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("node_id"), std::string::npos) << wrong.error().message;
}

PartitionRecord FullPartition() {
  PartitionRecord p;
  p.replicas = Ids({5, 3, 9, 1});
  p.isr = Ids({5, 9});
  p.leader = NodeId(9);
  p.leader_epoch = LeaderEpoch(17);
  p.partition_epoch = PartitionEpoch(2147483647);
  p.elr = Ids({3});
  p.last_known_elr = Ids({1});
  p.adding = Ids({1});
  p.removing = Ids({3, 5});
  p.non_contiguous = Ids({1});
  p.forgot_lost_data = {{NodeId(3), 812}, {NodeId(5), 4}};
  return p;
}

TEST(PartitionRecord, RoundTripsEveryField) {
  PartitionRecord p = FullPartition();
  auto d = DecodePartition(EncodePartition(p));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->replicas, Ids({5, 3, 9, 1}));  // order kept: the first is preferred
  EXPECT_EQ(d->isr, Ids({5, 9}));
  EXPECT_EQ(d->leader, NodeId(9));
  EXPECT_EQ(d->leader_epoch, LeaderEpoch(17));
  EXPECT_EQ(d->partition_epoch, PartitionEpoch(2147483647));
  EXPECT_EQ(d->elr, Ids({3}));
  EXPECT_EQ(d->last_known_elr, Ids({1}));
  EXPECT_EQ(d->adding, Ids({1}));
  EXPECT_EQ(d->removing, Ids({3, 5}));
  EXPECT_EQ(d->non_contiguous, Ids({1}));
  EXPECT_EQ(d->forgot_lost_data, (std::map<NodeId, int64_t>{{NodeId(3), 812}, {NodeId(5), 4}}));
  EXPECT_EQ(*d, p);
}

TEST(PartitionRecord, OfflineLeaderAndEmptyListsRoundTrip) {
  PartitionRecord p;
  p.replicas = Ids({2});
  p.leader = kNoNode;
  p.leader_epoch = LeaderEpoch(3);
  p.partition_epoch = PartitionEpoch(8);
  std::string encoded = EncodePartition(p);
  // No reassignment: adding and removing are left out (docs/metadata.md).
  auto doc = nlohmann::json::parse(encoded);
  EXPECT_FALSE(doc.contains("adding"));
  EXPECT_FALSE(doc.contains("removing"));
  EXPECT_FALSE(doc.contains("non_contiguous"));
  EXPECT_FALSE(doc.contains("forgot_lost_data"));
  auto d = DecodePartition(encoded);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->leader, kNoNode);
  EXPECT_TRUE(d->isr.empty());
  EXPECT_TRUE(d->elr.empty());
  EXPECT_EQ(*d, p);
}

// A record written before KIP-966 and reassignments.
TEST(PartitionRecord, OptionalListsDefaultToEmpty) {
  auto d = DecodePartition(
      R"({"replicas":[1,2],"isr":[2],"leader":2,"leader_epoch":4,"partition_epoch":6})");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->replicas, Ids({1, 2}));
  EXPECT_EQ(d->isr, Ids({2}));
  EXPECT_EQ(d->leader, NodeId(2));
  EXPECT_EQ(d->leader_epoch, LeaderEpoch(4));
  EXPECT_EQ(d->partition_epoch, PartitionEpoch(6));
  EXPECT_TRUE(d->elr.empty());
  EXPECT_TRUE(d->last_known_elr.empty());
  EXPECT_TRUE(d->adding.empty());
  EXPECT_TRUE(d->removing.empty());
  EXPECT_TRUE(d->non_contiguous.empty());
  EXPECT_TRUE(d->forgot_lost_data.empty());
}

TEST(PartitionRecord, MalformedIsCorrupt) {
  const std::string epochs = R"("leader":1,"leader_epoch":0,"partition_epoch":0)";
  for (const std::string& bad : std::vector<std::string>{
           "",
           "{",
           "null",
           "[]",
           "[1]",
           "3",
           R"("p")",
           "{" + epochs + "}",                                          // no replicas
           R"({"replicas":[],)" + epochs + "}",                         // empty replicas
           R"({"replicas":[1],"leader_epoch":0,"partition_epoch":0})",  // no leader
           R"({"replicas":[1],"leader":1,"partition_epoch":0})",        // no leader epoch
           R"({"replicas":[1],"leader":1,"leader_epoch":0})",           // no partition epoch
           R"({"replicas":["1"],)" + epochs + "}",
           R"({"replicas":[1,null],)" + epochs + "}",
           R"({"replicas":3,)" + epochs + "}",        // a number, not a list
           R"({"replicas":{"a":1},)" + epochs + "}",  // an object
           R"({"replicas":[1],"isr":"1",)" + epochs + "}",
           R"({"replicas":[1],"isr":[1.5],)" + epochs + "}",
           R"({"replicas":[1],"elr":[true],)" + epochs + "}",
           R"({"replicas":[1],"last_known_elr":1,)" + epochs + "}",
           R"({"replicas":[1],"adding":[4294967296],)" + epochs + "}",
           R"({"replicas":[1],"removing":"2",)" + epochs + "}",
           R"({"replicas":[1],"forgot_lost_data":[1],)" + epochs + "}",
           R"({"replicas":[1],"forgot_lost_data":{"x":1},)" + epochs + "}",
           R"({"replicas":[1],"forgot_lost_data":{"1":"9"},)" + epochs + "}",
           R"({"replicas":[1],"leader":"1","leader_epoch":0,"partition_epoch":0})",
           R"({"replicas":[1],"leader":1.5,"leader_epoch":0,"partition_epoch":0})",
           R"({"replicas":[1],"leader":1,"leader_epoch":2147483648,"partition_epoch":0})",
           R"({"replicas":[1],"leader":1,"leader_epoch":0,"partition_epoch":true})",
           R"({"replicas":[1],"leader":1,"leader_epoch":0,"partition_epoch":-2147483649})",
       }) {
    ExpectCorrupt(DecodePartition(bad), "partition", bad);
  }
  ASSERT_TRUE(DecodePartition(R"({"replicas":[1],)" + epochs + "}").ok());
}

TEST(TopicRecord, RoundTripsEveryField) {
  TopicRecord t;
  t.name = "payments.eu_v2-final";
  t.id = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
          0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
  t.partitions = 1024;
  t.replication_factor = 3;
  t.configs = {
      {"cleanup.policy", "compact"}, {"retention.ms", "-1"}, {"remote.storage.enable", "true"}};
  t.internal = true;
  auto d = DecodeTopic(EncodeTopic(t));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->name, "payments.eu_v2-final");
  EXPECT_EQ(d->id, t.id);
  EXPECT_EQ(d->partitions, 1024);
  EXPECT_EQ(d->replication_factor, 3);
  EXPECT_EQ(d->configs, t.configs);
  EXPECT_TRUE(d->internal);
  // The id is stored in Kafka's text form.
  EXPECT_EQ(nlohmann::json::parse(EncodeTopic(t)).at("id"), UuidToBase64(t.id));
}

TEST(TopicRecord, OptionalFieldsDefault) {
  TopicRecord t;
  t.id = RandomTopicId();
  std::string doc = R"({"name":"t","id":")" + UuidToBase64(t.id) + R"(","partitions":2})";
  auto d = DecodeTopic(doc);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->name, "t");
  EXPECT_EQ(d->id, t.id);
  EXPECT_EQ(d->partitions, 2);
  EXPECT_EQ(d->replication_factor, 1);
  EXPECT_TRUE(d->configs.empty());
  EXPECT_FALSE(d->internal);
}

TEST(TopicRecord, MalformedIsCorrupt) {
  const std::string id = R"("id":"AAECAwQFBgcICQoLDA0ODw")";
  for (const std::string& bad : std::vector<std::string>{
           "",
           "{",
           "null",
           "[]",
           "1",
           R"({)" + id + R"(,"partitions":1})",                              // no name
           R"({"name":"t","partitions":1})",                                 // no id
           R"({"name":"t",)" + id + "}",                                     // no partitions
           R"({"name":7,)" + id + R"(,"partitions":1})",                     // name a number
           R"({"name":"t","id":"AAECAwQFBgcICQoLDA0OD","partitions":1})",    // 21 chars
           R"({"name":"t","id":"AAECAwQFBgcICQoLDA0ODwA","partitions":1})",  // 23 chars
           R"({"name":"t","id":"AAECAwQFBgcICQoLDA0OD+","partitions":1})",   // not url-safe
           R"({"name":"t","id":"AAECAwQFBgcICQoLDA0ODw==","partitions":1})",
           R"({"name":"t","id":12,"partitions":1})",
           R"({"name":"t",)" + id + R"(,"partitions":0})",
           R"({"name":"t",)" + id + R"(,"partitions":-3})",
           R"({"name":"t",)" + id + R"(,"partitions":"3"})",
           R"({"name":"t",)" + id + R"(,"partitions":2.5})",
           R"({"name":"t",)" + id + R"(,"partitions":4294967297})",  // 1 after truncation
           R"({"name":"t",)" + id + R"(,"partitions":1,"replication_factor":"3"})",
           R"({"name":"t",)" + id + R"(,"partitions":1,"replication_factor":65539})",
           R"({"name":"t",)" + id + R"(,"partitions":1,"configs":{"retention.ms":1000}})",
           R"({"name":"t",)" + id + R"(,"partitions":1,"configs":"a=b"})",
           R"({"name":"t",)" + id + R"(,"partitions":1,"internal":"no"})",
       }) {
    ExpectCorrupt(DecodeTopic(bad), "topic", bad);
  }
  ASSERT_TRUE(DecodeTopic(R"({"name":"t",)" + id + R"(,"partitions":1})").ok());
}

TEST(TopicId, Base64RoundTripsAndRejectsOtherText) {
  TopicId zeros{};
  TopicId ones;
  ones.fill(0xff);
  EXPECT_EQ(UuidToBase64(zeros), "AAAAAAAAAAAAAAAAAAAAAA");
  EXPECT_EQ(UuidToBase64(ones), "_____________________w");
  EXPECT_EQ(TopicIdFromBase64("AAAAAAAAAAAAAAAAAAAAAA"), zeros);
  EXPECT_EQ(TopicIdFromBase64("_____________________w"), ones);
  TopicId counting;
  for (size_t i = 0; i < counting.size(); ++i) counting[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(UuidToBase64(counting), "AAECAwQFBgcICQoLDA0ODw");
  for (int i = 0; i < 100; ++i) {
    TopicId id = RandomTopicId();
    std::string text = UuidToBase64(id);
    ASSERT_EQ(text.size(), 22u);
    EXPECT_EQ(TopicIdFromBase64(text), id) << text;
  }
  for (const std::string bad :
       {"", "AAAA", "AAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAA+w",
        "AAAAAAAAAAAAAAAAAAAA/w", "AAAAAAAAAAAAAAAAAAAAA=", "AAAAAAAAAAAAAAAAAAAA w"}) {
    EXPECT_FALSE(TopicIdFromBase64(bad).has_value()) << bad;
  }
}

TEST(ConfigsRecord, RoundTripsAndRejectsNonStrings) {
  std::map<std::string, std::string> configs = {{"log.retention.ms", "604800000"},
                                                {"message.max.bytes", "1048588"},
                                                {"empty", ""},
                                                {"quote\"and\\slash", "line\nbreak"}};
  auto d = DecodeConfigs(EncodeConfigs(configs));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, configs);
  auto none = DecodeConfigs(EncodeConfigs({}));
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->empty());
  for (const std::string& bad :
       std::vector<std::string>{"", "{", "null", "1", R"("a=b")", R"({"a":1})", R"({"a":null})",
                                R"({"a":["b"]})", R"([["a","b"]])", R"(["a"])"}) {
    ExpectCorrupt(DecodeConfigs(bad), "broker configs", bad);
  }
}

TEST(RemoteLogRecord, RoundTripsEveryField) {
  RemoteLogOffsets o{
      .start = 1'000, .end = 9'000'000'000, .log_start = 1'500, .leader_epoch = LeaderEpoch(7)};
  std::string encoded = EncodeRemoteLogOffsets(o);
  auto d = DecodeRemoteLogOffsets(encoded);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->start, 1'000);
  EXPECT_EQ(d->end, 9'000'000'000);
  EXPECT_EQ(d->log_start, 1'500);
  EXPECT_EQ(d->leader_epoch, LeaderEpoch(7));
  EXPECT_EQ(*d, o);
}

// Single-broker bounds carry no leader epoch; the field is left out and
// reads back as -1, as do records written before it existed.
TEST(RemoteLogRecord, NoLeaderEpochAndOlderRecords) {
  RemoteLogOffsets o{.start = 0, .end = 41, .log_start = -1, .leader_epoch = LeaderEpoch(-1)};
  std::string encoded = EncodeRemoteLogOffsets(o);
  EXPECT_FALSE(nlohmann::json::parse(encoded).contains("leader_epoch"));
  auto d = DecodeRemoteLogOffsets(encoded);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, o);
  auto old = DecodeRemoteLogOffsets(R"({"start":5,"end":6})");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(*old, (RemoteLogOffsets{
                      .start = 5, .end = 6, .log_start = -1, .leader_epoch = LeaderEpoch(-1)}));
}

TEST(RemoteLogRecord, MalformedIsCorrupt) {
  for (const std::string& bad : std::vector<std::string>{
           "",
           "{",
           "null",
           "[]",
           "[1,2]",
           R"({"end":6})",    // no start
           R"({"start":5})",  // no end
           R"({"start":"5","end":6})",
           R"({"start":5,"end":6.5})",
           R"({"start":5,"end":true})",
           R"({"start":5,"end":18446744073709551615})",  // beyond int64
           R"({"start":5,"end":6,"log_start":"5"})",
           R"({"start":5,"end":6,"leader_epoch":4294967296})",
           R"({"start":5,"end":6,"leader_epoch":[1]})",
       }) {
    ExpectCorrupt(DecodeRemoteLogOffsets(bad), "remote log", bad);
  }
}

}  // namespace
}  // namespace strata::cluster
