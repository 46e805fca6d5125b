// Tests for the request/response definitions in protocol/messages/ and the
// request registry: per-version round trips of fully populated messages,
// hand-written golden bytes, truncation and hostile lengths.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "protocol/all_requests.h"
#include "protocol/header.h"
#include "protocol/message.h"
#include "protocol/messages/alter_configs.h"
#include "protocol/messages/alter_partition_reassignments.h"
#include "protocol/messages/api_versions.h"
#include "protocol/messages/consumer_group_describe.h"
#include "protocol/messages/consumer_group_heartbeat.h"
#include "protocol/messages/create_partitions.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/delete_groups.h"
#include "protocol/messages/delete_records.h"
#include "protocol/messages/delete_topics.h"
#include "protocol/messages/describe_cluster.h"
#include "protocol/messages/describe_configs.h"
#include "protocol/messages/describe_groups.h"
#include "protocol/messages/describe_log_dirs.h"
#include "protocol/messages/describe_quorum.h"
#include "protocol/messages/describe_topic_partitions.h"
#include "protocol/messages/elect_leaders.h"
#include "protocol/messages/envelope.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/heartbeat.h"
#include "protocol/messages/incremental_alter_configs.h"
#include "protocol/messages/init_producer_id.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/leave_group.h"
#include "protocol/messages/list_groups.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/list_partition_reassignments.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/offset_commit.h"
#include "protocol/messages/offset_delete.h"
#include "protocol/messages/offset_fetch.h"
#include "protocol/messages/offset_for_leader_epoch.h"
#include "protocol/messages/produce.h"
#include "protocol/messages/sync_group.h"
#include "protocol/messages/unregister_broker.h"
#include "protocol/request_registry.h"
#include "protocol/security_messages_fill.h"
#include "protocol/txn_messages_fill.h"

// ---------------------------------------------------------------------------
// Allocation probe: records the largest single operator-new request while
// armed, to prove hostile lengths are rejected before anything is reserved.
namespace {
std::atomic<bool> g_probe_armed{false};
std::atomic<size_t> g_probe_max{0};
}  // namespace

void* operator new(size_t n) {
  if (g_probe_armed.load(std::memory_order_relaxed)) {
    size_t cur = g_probe_max.load(std::memory_order_relaxed);
    while (n > cur && !g_probe_max.compare_exchange_weak(cur, n)) {
    }
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
// Out of line so the compiler does not pair the inlined malloc/free with
// new/delete expressions and warn about a mismatch.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace strata::protocol {
namespace {

// ------------------------------------------------------------------ helpers

Bytes Hex(const std::string& hex) {
  Bytes out;
  std::string digits;
  for (char c : hex) {
    if (std::isxdigit(static_cast<unsigned char>(c))) digits.push_back(c);
  }
  for (size_t i = 0; i + 1 < digits.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(digits.substr(i, 2), nullptr, 16)));
  }
  return out;
}

template <class M>
Bytes EncodeAt(M& m, int16_t v, bool flexible) {
  Bytes out;
  Encode(m, v, flexible, out);
  return out;
}

// The decoded message plus the buffer its RecordsField views point into.
template <class M>
struct Decoded {
  Bytes wire;
  M msg;
};

// Encodes, decodes (requiring every byte consumed) and re-encodes; the two
// encodings must be identical.
template <class M>
Decoded<M> RoundTrip(M& m, int16_t v, bool flexible) {
  Decoded<M> d;
  d.wire = EncodeAt(m, v, flexible);
  Bytes copy = d.wire;
  WireReader r(MutableByteView(d.wire.data(), d.wire.size()), flexible);
  d.msg.Serde(r, v);
  EXPECT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(EncodeAt(d.msg, v, flexible), copy);
  return d;
}

// A value that is null when the test asks for nulls and the field is nullable
// in the version under test.
std::optional<std::string> Opt(bool make_null, std::string s) {
  if (make_null) return std::nullopt;
  return s;
}

Uuid Id(uint8_t seed) {
  Uuid u;
  for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<uint8_t>(seed + i);
  return u;
}

Bytes Blob(uint8_t seed) { return Bytes{seed, uint8_t(seed + 1), uint8_t(seed + 2)}; }

// ---------------------------------------------------- per-message fillers
// Each sets every field that exists in version v to a non-default value (and
// leaves absent fields at their defaults, so decoded == filled). `nulls`
// turns nullable fields into nulls where that version allows it.

void Fill(ApiVersionsRequest& m, int16_t v, bool) {
  if (v >= 3) {
    m.client_software_name = "strata-client";
    m.client_software_version = "1.2.3";
  }
}
void Fill(ApiVersionsResponse& m, int16_t v, bool) {
  m.error_code = 35;
  m.api_keys = {{0, 3, 11}, {18, 0, 4}};
  if (v >= 1) m.throttle_time_ms = 12;
}

void Fill(ProduceRequest& m, int16_t v, bool nulls) {
  if (v >= 3) m.transactional_id = Opt(nulls, "txn-1");
  m.acks = 1;
  m.timeout_ms = 1500;
  for (const char* name : {"orders", "events"}) {
    ProduceRequest::Topic t;
    t.name = name;
    for (int32_t i = 0; i < 2; ++i) {
      ProduceRequest::Partition p;
      p.index = i + 3;
      p.records.Own(Blob(uint8_t(10 * i)));
      if (nulls && i == 1) p.records = RecordsField{.null = true};
      t.partitions.push_back(std::move(p));
    }
    m.topics.push_back(std::move(t));
  }
}
void Fill(ProduceResponse& m, int16_t v, bool nulls) {
  for (const char* name : {"orders", "events"}) {
    ProduceResponse::Topic t;
    t.name = name;
    for (int32_t i = 0; i < 2; ++i) {
      ProduceResponse::Partition p;
      p.index = i;
      p.error_code = 6;
      p.base_offset = 1000 + i;
      if (v >= 2) p.log_append_time_ms = 1700000000000;
      if (v >= 5) p.log_start_offset = 17;
      if (v >= 8) {
        p.record_errors = {{1, Opt(nulls, "bad record")}, {4, "worse"}};
        p.error_message = Opt(nulls, "partition failed");
      }
      if (v >= 10 && !nulls && i == 1) p.current_leader = {{3, 7}};
      t.partitions.push_back(std::move(p));
    }
    m.topics.push_back(std::move(t));
  }
  if (v >= 1) m.throttle_time_ms = 33;
  if (v >= 10 && !nulls) {
    m.node_endpoints = {{{3, "broker-3", 9094, "rack-a"}, {4, "broker-4", 9095, std::nullopt}}};
  }
}

void Fill(MetadataRequest& m, int16_t v, bool nulls) {
  if (nulls && v >= 1) return;  // topics = null: all topics
  m.topics.emplace();
  for (uint8_t i = 0; i < 2; ++i) {
    MetadataRequest::Topic t;
    if (v >= 10) t.topic_id = Id(i);
    t.name = Opt(nulls && v >= 10, "topic-" + std::to_string(i));
    m.topics->push_back(t);
  }
  if (v >= 4) m.allow_auto_topic_creation = false;
  if (v >= 8 && v <= 10) m.include_cluster_authorized_operations = true;
  if (v >= 8) m.include_topic_authorized_operations = true;
}
void Fill(MetadataResponse& m, int16_t v, bool nulls) {
  if (v >= 3) m.throttle_time_ms = 7;
  for (int32_t i = 0; i < 2; ++i) {
    MetadataResponse::Broker b{.node_id = i + 1, .host = "host" + std::to_string(i), .port = 9092};
    if (v >= 1) b.rack = Opt(nulls, "rack-a");
    m.brokers.push_back(b);
  }
  if (v >= 2) m.cluster_id = Opt(nulls, "cluster-xyz");
  if (v >= 1) m.controller_id = 2;
  for (uint8_t i = 0; i < 2; ++i) {
    MetadataResponse::Topic t;
    t.error_code = 3;
    t.name = Opt(nulls && v >= 12, "t" + std::to_string(i));
    if (v >= 10) t.topic_id = Id(uint8_t(40 + i));
    if (v >= 1) t.is_internal = true;
    for (int32_t p = 0; p < 2; ++p) {
      MetadataResponse::Partition part;
      part.error_code = 9;
      part.partition_index = p;
      part.leader_id = 1;
      if (v >= 7) part.leader_epoch = 5;
      part.replica_nodes = {1, 2};
      part.isr_nodes = {1};
      if (v >= 5) part.offline_replicas = {2, 3};
      t.partitions.push_back(part);
    }
    if (v >= 8) t.topic_authorized_operations = 0x0ff8;
    m.topics.push_back(t);
  }
  if (v >= 8 && v <= 10) m.cluster_authorized_operations = 0x0100;
}

void Fill(FetchRequest& m, int16_t v, bool) {
  m.replica_id = 3;
  m.max_wait_ms = 500;
  m.min_bytes = 1;
  if (v >= 3) m.max_bytes = 52428800;
  if (v >= 4) m.isolation_level = 1;
  if (v >= 7) {
    m.session_id = 77;
    m.session_epoch = 4;
  }
  for (const char* name : {"a", "bb"}) {
    FetchRequest::Topic t{.topic = name};
    for (int32_t i = 0; i < 2; ++i) {
      FetchRequest::Partition p{
          .partition = i, .fetch_offset = 100 + i, .partition_max_bytes = 1048576};
      if (v >= 9) p.current_leader_epoch = 8;
      if (v >= 12) p.last_fetched_epoch = 7;
      if (v >= 5) p.log_start_offset = 10;
      t.partitions.push_back(p);
    }
    m.topics.push_back(t);
  }
  if (v >= 7) m.forgotten_topics_data = {{"old", {1, 2}}, {"older", {0, 5}}};
  if (v >= 11) m.rack_id = "rack-1";
}
void Fill(FetchResponse& m, int16_t v, bool nulls) {
  if (v >= 1) m.throttle_time_ms = 4;
  if (v >= 7) {
    m.error_code = 70;
    m.session_id = 123;
  }
  for (const char* name : {"a", "bb"}) {
    FetchResponse::Topic t{.topic = name};
    for (int32_t i = 0; i < 2; ++i) {
      FetchResponse::Partition p;
      p.partition_index = i;
      p.error_code = 1;
      p.high_watermark = 500;
      if (v >= 4) {
        p.last_stable_offset = 450;
        if (!nulls) p.aborted_transactions = {{{9, 400}, {10, 420}}};
      }
      if (v >= 5) p.log_start_offset = 3;
      if (v >= 11) p.preferred_read_replica = 2;
      if (nulls) {
        p.records.null = true;
      } else {
        p.records.Own(Blob(uint8_t(i)));
      }
      t.partitions.push_back(std::move(p));
    }
    m.responses.push_back(std::move(t));
  }
}

void Fill(ListOffsetsRequest& m, int16_t v, bool) {
  m.replica_id = -1;
  if (v >= 2) m.isolation_level = 1;
  for (const char* name : {"x", "y"}) {
    ListOffsetsRequest::Topic t{.name = name};
    for (int32_t i = 0; i < 2; ++i) {
      ListOffsetsRequest::Partition p{.partition_index = i, .timestamp = -2};
      if (v >= 4) p.current_leader_epoch = 6;
      if (v == 0) p.max_num_offsets = 3;
      t.partitions.push_back(p);
    }
    m.topics.push_back(t);
  }
}
void Fill(ListOffsetsResponse& m, int16_t v, bool) {
  if (v >= 2) m.throttle_time_ms = 9;
  for (const char* name : {"x", "y"}) {
    ListOffsetsResponse::Topic t{.name = name};
    for (int32_t i = 0; i < 2; ++i) {
      ListOffsetsResponse::Partition p{.partition_index = i, .error_code = 3};
      if (v == 0) p.old_style_offsets = {50, 0};
      if (v >= 1) {
        p.timestamp = 1700000000000;
        p.offset = 50;
      }
      if (v >= 4) p.leader_epoch = 2;
      t.partitions.push_back(p);
    }
    m.topics.push_back(t);
  }
}

void Fill(CreateTopicsRequest& m, int16_t v, bool nulls) {
  for (const char* name : {"new1", "new2"}) {
    CreateTopicsRequest::Topic t{.name = name, .num_partitions = 3, .replication_factor = 2};
    t.assignments = {{0, {1, 2}}, {1, {2, 3}}};
    t.configs = {{"cleanup.policy", Opt(nulls, "compact")}, {"retention.ms", "1000"}};
    m.topics.push_back(t);
  }
  m.timeout_ms = 2500;
  if (v >= 1) m.validate_only = true;
}
void Fill(CreateTopicsResponse& m, int16_t v, bool nulls) {
  if (v >= 2) m.throttle_time_ms = 3;
  for (uint8_t i = 0; i < 2; ++i) {
    CreateTopicsResponse::Topic t{.name = "new" + std::to_string(i), .error_code = 36};
    if (v >= 7) t.topic_id = Id(i);
    if (v >= 1) t.error_message = Opt(nulls, "exists");
    if (v >= 5) {
      t.num_partitions = 3;
      t.replication_factor = 2;
      if (!nulls) {
        t.configs = {{{"cleanup.policy", "delete", true, 5, false},
                      {"secret", std::nullopt, false, 4, true}}};
      }
    }
    m.topics.push_back(t);
  }
}

void Fill(DeleteTopicsRequest& m, int16_t v, bool nulls) {
  if (v >= 6) {
    m.topics = {{Opt(nulls, "gone"), Id(1)}, {"also-gone", Id(2)}};
  } else {
    m.topic_names = {"gone", "also-gone"};
  }
  m.timeout_ms = 1000;
}
void Fill(DeleteTopicsResponse& m, int16_t v, bool nulls) {
  if (v >= 1) m.throttle_time_ms = 2;
  for (uint8_t i = 0; i < 2; ++i) {
    DeleteTopicsResponse::TopicResult r;
    r.name = Opt(nulls && v >= 6, "gone" + std::to_string(i));
    if (v >= 6) r.topic_id = Id(i);
    r.error_code = 3;
    if (v >= 5) r.error_message = Opt(nulls, "unknown");
    m.responses.push_back(r);
  }
}

void Fill(DeleteRecordsRequest& m, int16_t, bool) {
  m.topics = {{"t1", {{0, 10}, {1, -1}}}, {"t2", {{3, 4}, {4, 5}}}};
  m.timeout_ms = 900;
}
void Fill(DeleteRecordsResponse& m, int16_t, bool) {
  m.throttle_time_ms = 1;
  m.topics = {{"t1", {{0, 10, 0}, {1, 20, 1}}}, {"t2", {{3, 4, 3}, {4, 5, 0}}}};
}

void Fill(InitProducerIdRequest& m, int16_t v, bool nulls) {
  m.transactional_id = Opt(nulls, "txn");
  m.transaction_timeout_ms = 60000;
  if (v >= 3) {
    m.producer_id = 4000;
    m.producer_epoch = 3;
  }
}
void Fill(InitProducerIdResponse& m, int16_t, bool) {
  m.throttle_time_ms = 5;
  m.error_code = 47;
  m.producer_id = 4001;
  m.producer_epoch = 4;
}

void Fill(OffsetForLeaderEpochRequest& m, int16_t v, bool) {
  if (v >= 3) m.replica_id = -1;
  for (const char* name : {"e1", "e2"}) {
    OffsetForLeaderEpochRequest::Topic t{.topic = name};
    for (int32_t i = 0; i < 2; ++i) {
      OffsetForLeaderEpochRequest::Partition p{.partition = i, .leader_epoch = 4};
      if (v >= 2) p.current_leader_epoch = 5;
      t.partitions.push_back(p);
    }
    m.topics.push_back(t);
  }
}
void Fill(OffsetForLeaderEpochResponse& m, int16_t v, bool) {
  if (v >= 2) m.throttle_time_ms = 6;
  for (const char* name : {"e1", "e2"}) {
    OffsetForLeaderEpochResponse::Topic t{.topic = name};
    for (int32_t i = 0; i < 2; ++i) {
      OffsetForLeaderEpochResponse::Partition p{.error_code = 75, .partition = i, .end_offset = 99};
      if (v >= 1) p.leader_epoch = 4;
      t.partitions.push_back(p);
    }
    m.topics.push_back(t);
  }
}

void Fill(DescribeConfigsRequest& m, int16_t v, bool nulls) {
  DescribeConfigsRequest::Resource a{.resource_type = 2, .resource_name = "topic-a"};
  if (!nulls) a.configuration_keys = {{"retention.ms", "segment.bytes"}};
  DescribeConfigsRequest::Resource b{.resource_type = 4, .resource_name = "1"};
  b.configuration_keys = {{"log.dirs", "num.io.threads"}};
  m.resources = {a, b};
  if (v >= 1) m.include_synonyms = true;
  if (v >= 3) m.include_documentation = true;
}
void Fill(DescribeConfigsResponse& m, int16_t v, bool nulls) {
  m.throttle_time_ms = 8;
  for (uint8_t i = 0; i < 2; ++i) {
    DescribeConfigsResponse::ResourceResult r;
    r.error_code = 0;
    r.error_message = Opt(nulls, "fine");
    r.resource_type = 2;
    r.resource_name = "topic-" + std::to_string(i);
    for (int j = 0; j < 2; ++j) {
      DescribeConfigsResponse::Config c;
      c.name = "cfg" + std::to_string(j);
      c.value = Opt(nulls, "v");
      c.read_only = true;
      if (v == 0) c.is_default = true;
      if (v >= 1) {
        c.config_source = 5;
        c.synonyms = {{"log.cfg", Opt(nulls, "x"), 4}, {"default.cfg", "y", 5}};
      }
      c.is_sensitive = true;
      if (v >= 3) {
        c.config_type = 3;
        c.documentation = Opt(nulls, "docs");
      }
      r.configs.push_back(c);
    }
    m.results.push_back(r);
  }
}

void Fill(AlterConfigsRequest& m, int16_t, bool nulls) {
  m.resources = {{2, "t1", {{"retention.ms", Opt(nulls, "10")}, {"segment.ms", "20"}}},
                 {4, "0", {{"a", "b"}, {"c", "d"}}}};
  m.validate_only = true;
}
void Fill(AlterConfigsResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 3;
  m.responses = {{40, Opt(nulls, "invalid"), 2, "t1"}, {0, "ok", 4, "0"}};
}

void Fill(IncrementalAlterConfigsRequest& m, int16_t, bool nulls) {
  m.resources = {{2, "t1", {{"retention.ms", 0, "10"}, {"cleanup.policy", 1, Opt(nulls, "x")}}},
                 {4, "0", {{"a", 2, "b"}, {"c", 3, "d"}}}};
  m.validate_only = true;
}
void Fill(IncrementalAlterConfigsResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 4;
  m.responses = {{40, Opt(nulls, "bad"), 2, "t1"}, {0, "ok", 4, "0"}};
}

void Fill(CreatePartitionsRequest& m, int16_t, bool nulls) {
  CreatePartitionsRequest::Topic a{.name = "t1", .count = 6};
  if (!nulls) a.assignments = {{{{1, 2}}, {{2, 3}}}};
  CreatePartitionsRequest::Topic b{.name = "t2", .count = 4};
  b.assignments = {{{{3}}, {{1}}}};
  m.topics = {a, b};
  m.timeout_ms = 700;
  m.validate_only = true;
}
void Fill(CreatePartitionsResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 2;
  m.results = {{"t1", 37, Opt(nulls, "too few")}, {"t2", 0, "none"}};
}

void Fill(DescribeClusterRequest& m, int16_t v, bool) {
  m.include_cluster_authorized_operations = true;
  if (v >= 1) m.endpoint_type = 2;
  if (v >= 2) m.include_fenced_brokers = true;
}
void Fill(DescribeClusterResponse& m, int16_t v, bool nulls) {
  m.throttle_time_ms = 1;
  m.error_code = 31;
  m.error_message = Opt(nulls, "denied");
  if (v >= 1) m.endpoint_type = 2;
  m.cluster_id = "cluster";
  m.controller_id = 3;
  m.brokers = {{1, "h1", 9092, Opt(nulls, "r1")}, {2, "h2", 9093, "r2", v >= 2}};
  m.cluster_authorized_operations = 0x20;
}

void Fill(UnregisterBrokerRequest& m, int16_t, bool) { m.broker_id = 7; }
void Fill(GetTelemetrySubscriptionsRequest& m, int16_t, bool nulls) {
  if (!nulls) m.client_instance_id[3] = 9;  // zero (first request) with "nulls"
}
void Fill(PushTelemetryRequest& m, int16_t, bool nulls) {
  m.client_instance_id[0] = 1;
  m.subscription_id = 42;
  m.terminating = nulls;
  m.compression_type = 4;
  m.metrics = nulls ? Bytes{} : Bytes{1, 2, 3};
}
void Fill(ConsumerGroupHeartbeatRequest& m, int16_t v, bool nulls) {
  m.group_id = "g";
  m.member_id = "m-1";
  m.member_epoch = nulls ? -2 : 4;
  m.instance_id = Opt(nulls, "i-1");
  m.rack_id = Opt(nulls, "r1");
  m.rebalance_timeout_ms = nulls ? -1 : 300000;
  if (!nulls) m.subscribed_topic_names = std::vector<std::string>{"a", "b"};
  if (v >= 1) m.subscribed_topic_regex = Opt(nulls, "a.*");
  m.server_assignor = Opt(nulls, "uniform");
  if (!nulls) m.topic_partitions = std::vector<ConsumerGroupTopicPartitions>{{Id(1), {0, 2}}};
}
void Fill(ConsumerGroupHeartbeatResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 3;
  m.error_code = nulls ? 0 : 110;
  m.error_message = Opt(nulls, "fenced");
  m.member_id = Opt(nulls, "m-1");
  m.member_epoch = 5;
  m.heartbeat_interval_ms = 5000;
  if (!nulls) {
    m.assignment = std::vector<ConsumerGroupTopicPartitions>{{Id(1), {1}}, {Id(7), {}}};
  }
}
void Fill(ConsumerGroupDescribeRequest& m, int16_t, bool nulls) {
  m.group_ids = {"g1", "g2"};
  m.include_authorized_operations = !nulls;
}
void Fill(ConsumerGroupDescribeResponse& m, int16_t v, bool nulls) {
  m.throttle_time_ms = 2;
  ConsumerGroupDescribeResponse::Member member;
  member.member_id = "m-1";
  member.instance_id = Opt(nulls, "i-1");
  member.rack_id = Opt(nulls, "r1");
  member.member_epoch = 7;
  member.client_id = "c";
  member.client_host = "/127.0.0.1";
  member.subscribed_topic_names = {"a"};
  member.subscribed_topic_regex = Opt(nulls, "a.*");
  member.assignment.topic_partitions = {{Id(1), "a", {0, 1}}};
  member.target_assignment.topic_partitions = {{Id(1), "a", {0}}};
  if (v >= 1) member.member_type = ConsumerGroupDescribeResponse::kConsumerMember;
  m.groups = {{0, std::nullopt, "g1", "Stable", 7, 7, "uniform", {member}, 0x100},
              {69, Opt(nulls, "no group g2"), "g2", "Dead", -1, -1, "", {}, INT32_MIN}};
}
void Fill(UnregisterBrokerResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 5;
  m.error_code = 102;
  m.error_message = Opt(nulls, "broker 7 is not registered");
}

void Fill(AlterPartitionReassignmentsRequest& m, int16_t v, bool nulls) {
  m.timeout_ms = 5000;
  if (v >= 1) m.allow_replication_factor_change = false;
  AlterPartitionReassignmentsRequest::Partition cancel{1, std::nullopt};
  if (!nulls) cancel.replicas = std::vector<int32_t>{};  // empty, not null
  m.topics = {{"t1", {{0, std::vector<int32_t>{3, 1, 2}}, cancel}}, {"t2", {}}};
}
void Fill(AlterPartitionReassignmentsResponse& m, int16_t v, bool nulls) {
  m.throttle_time_ms = 3;
  if (v >= 1) m.allow_replication_factor_change = false;
  m.error_code = nulls ? 0 : 41;
  m.error_message = Opt(nulls, "not the controller");
  m.responses = {{"t1", {{0, 0, Opt(nulls, "ok")}, {1, 85, "no reassignment in progress"}}},
                 {"t2", {}}};
}
void Fill(ListPartitionReassignmentsRequest& m, int16_t, bool nulls) {
  m.timeout_ms = 5000;
  if (!nulls)
    m.topics = std::vector<ListPartitionReassignmentsRequest::Topic>{{"t1", {0, 2}}, {"t2", {}}};
}
void Fill(ListPartitionReassignmentsResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 4;
  m.error_code = nulls ? 0 : 31;
  m.error_message = Opt(nulls, "denied");
  m.topics = {{"t1", {{0, {3, 1, 2, 4}, {4}, {3}}, {2, {1, 2}, {}, {}}}}};
}

void Fill(DescribeLogDirsRequest& m, int16_t, bool nulls) {
  if (!nulls) m.topics = std::vector<DescribeLogDirsRequest::Topic>{{"t1", {0, 2}}, {"t2", {}}};
}
void Fill(DescribeLogDirsResponse& m, int16_t v, bool nulls) {
  m.throttle_time_ms = 6;
  if (v >= 3) m.error_code = nulls ? 0 : 31;
  DescribeLogDirsResponse::Result dir{0, "/var/lib/strata", {}};
  dir.topics = {{"t1", {{0, 4096, 0, false}, {2, 1 << 20, 17, true}}}, {"t2", {}}};
  if (v >= 4) {
    dir.total_bytes = int64_t{1} << 40;
    dir.usable_bytes = int64_t{3} << 30;
  }
  DescribeLogDirsResponse::Result offline{56, "/mnt/broken", {}};
  m.results = {dir, offline};
}

void Fill(DescribeQuorumRequest& m, int16_t, bool) { m.topics = {{"__cluster_metadata", {{0}}}}; }
void Fill(EnvelopeRequest& m, int16_t, bool nulls) {
  m.request_data = {0, 19, 0, 7, 0, 0, 0, 9};
  if (!nulls) m.request_principal = Bytes{1, 2, 3};
  m.client_host_address = {127, 0, 0, 1};
}
void Fill(EnvelopeResponse& m, int16_t, bool nulls) {
  if (!nulls) m.response_data = Bytes{0, 0, 0, 9, 0};
  m.error_code = nulls ? 41 : 0;  // NOT_CONTROLLER
}
void Fill(DescribeTopicPartitionsRequest& m, int16_t, bool nulls) {
  m.topics = {{"a"}, {"b"}};
  m.response_partition_limit = 7;
  if (!nulls) m.cursor = TopicPartitionCursor{"b", 3};
}
void Fill(DescribeTopicPartitionsResponse& m, int16_t, bool nulls) {
  DescribeTopicPartitionsResponse::Partition p;
  p.partition_index = 3;
  p.leader_id = 2;
  p.leader_epoch = 5;
  p.replica_nodes = {2, 1};
  p.isr_nodes = {2};
  if (nulls) p.eligible_leader_replicas.reset();
  p.offline_replicas = {1};
  DescribeTopicPartitionsResponse::Topic t;
  t.name = "b";
  t.topic_id[0] = 9;
  t.is_internal = nulls;
  t.partitions = {p};
  m.topics = {t};
  if (!nulls) m.next_cursor = TopicPartitionCursor{"b", 4};
}
void Fill(ElectLeadersRequest& m, int16_t v, bool nulls) {
  if (v >= 1) m.election_type = 1;
  if (!nulls) m.topic_partitions = std::vector<ElectLeadersRequest::TopicPartitions>{{"t", {0, 2}}};
  m.timeout_ms = 5000;
}
void Fill(ElectLeadersResponse& m, int16_t v, bool nulls) {
  if (v >= 1) m.error_code = 0;
  ElectLeadersResponse::PartitionResult p{2, 84, std::nullopt};
  if (!nulls) p.error_message = "not needed";
  m.replica_election_results = {{"t", {p}}};
}
void Fill(DescribeQuorumResponse& m, int16_t v, bool) {
  DescribeQuorumResponse::Partition p;
  p.leader_id = 1;
  p.leader_epoch = 4;
  p.high_watermark = 1234;
  p.current_voters = {{0, 1200, v >= 1 ? 17 : -1, v >= 1 ? 18 : -1}, {1, 1234, -1, -1}};
  p.observers = {{3, 1100, -1, -1}};
  m.topics = {{"__cluster_metadata", {p}}};
}

void Fill(FindCoordinatorRequest& m, int16_t v, bool) {
  if (v <= 3) m.key = "group-1";
  if (v >= 1) m.key_type = 1;
  if (v >= 4) m.coordinator_keys = {"g1", "g2"};
}
void Fill(FindCoordinatorResponse& m, int16_t v, bool nulls) {
  if (v >= 1) m.throttle_time_ms = 5;
  if (v <= 3) {
    m.error_code = 15;
    if (v >= 1) m.error_message = Opt(nulls, "not available");
    m.node_id = 2;
    m.host = "broker2";
    m.port = 9093;
  }
  if (v >= 4) {
    m.coordinators = {{"g1", 1, "h1", 9092, 0, Opt(nulls, "ok")}, {"g2", 2, "h2", 9093, 15, "na"}};
  }
}

void Fill(JoinGroupRequest& m, int16_t v, bool nulls) {
  m.group_id = "grp";
  m.session_timeout_ms = 10000;
  if (v >= 1) m.rebalance_timeout_ms = 30000;
  m.member_id = "member-1";
  if (v >= 5) m.group_instance_id = Opt(nulls, "instance-1");
  m.protocol_type = "consumer";
  m.protocols = {{"range", Blob(1)}, {"roundrobin", Blob(7)}};
  if (v >= 8) m.reason = Opt(nulls, "rejoin");
}
void Fill(JoinGroupResponse& m, int16_t v, bool nulls) {
  if (v >= 2) m.throttle_time_ms = 6;
  m.error_code = 27;
  m.generation_id = 3;
  if (v >= 7) m.protocol_type = Opt(nulls, "consumer");
  m.protocol_name = Opt(nulls && v >= 7, "range");
  m.leader = "member-1";
  if (v >= 9) m.skip_assignment = true;
  m.member_id = "member-2";
  for (int i = 0; i < 2; ++i) {
    JoinGroupResponse::Member mem{.member_id = "member-" + std::to_string(i), .metadata = Blob(3)};
    if (v >= 5) mem.group_instance_id = Opt(nulls, "inst");
    m.members.push_back(mem);
  }
}

void Fill(HeartbeatRequest& m, int16_t v, bool nulls) {
  m.group_id = "grp";
  m.generation_id = 4;
  m.member_id = "m1";
  if (v >= 3) m.group_instance_id = Opt(nulls, "inst");
}
void Fill(HeartbeatResponse& m, int16_t v, bool) {
  if (v >= 1) m.throttle_time_ms = 2;
  m.error_code = 27;
}

void Fill(LeaveGroupRequest& m, int16_t v, bool nulls) {
  m.group_id = "grp";
  if (v <= 2) m.member_id = "m1";
  if (v >= 3) {
    for (int i = 0; i < 2; ++i) {
      LeaveGroupRequest::Member mem{.member_id = "m" + std::to_string(i),
                                    .group_instance_id = Opt(nulls, "inst")};
      if (v >= 5) mem.reason = Opt(nulls, "shutdown");
      m.members.push_back(mem);
    }
  }
}
void Fill(LeaveGroupResponse& m, int16_t v, bool nulls) {
  if (v >= 1) m.throttle_time_ms = 3;
  m.error_code = 25;
  if (v >= 3) m.members = {{"m0", Opt(nulls, "inst"), 25}, {"m1", "inst1", 0}};
}

void Fill(SyncGroupRequest& m, int16_t v, bool nulls) {
  m.group_id = "grp";
  m.generation_id = 5;
  m.member_id = "m1";
  if (v >= 3) m.group_instance_id = Opt(nulls, "inst");
  if (v >= 5) {
    m.protocol_type = Opt(nulls, "consumer");
    m.protocol_name = Opt(nulls, "range");
  }
  m.assignments = {{"m1", Blob(4)}, {"m2", Blob(9)}};
}
void Fill(SyncGroupResponse& m, int16_t v, bool nulls) {
  if (v >= 1) m.throttle_time_ms = 4;
  m.error_code = 22;
  if (v >= 5) {
    m.protocol_type = Opt(nulls, "consumer");
    m.protocol_name = Opt(nulls, "range");
  }
  m.assignment = Blob(11);
}

void Fill(DescribeGroupsRequest& m, int16_t v, bool) {
  m.groups = {"g1", "g2"};
  if (v >= 3) m.include_authorized_operations = true;
}
void Fill(DescribeGroupsResponse& m, int16_t v, bool nulls) {
  if (v >= 1) m.throttle_time_ms = 5;
  for (int g = 0; g < 2; ++g) {
    DescribeGroupsResponse::Group grp{.error_code = 0,
                                      .group_id = "g" + std::to_string(g),
                                      .group_state = "Stable",
                                      .protocol_type = "consumer",
                                      .protocol_data = "range"};
    for (int i = 0; i < 2; ++i) {
      DescribeGroupsResponse::Member mem{.member_id = "m" + std::to_string(i),
                                         .client_id = "client",
                                         .client_host = "/10.0.0.1",
                                         .member_metadata = Blob(1),
                                         .member_assignment = Blob(2)};
      if (v >= 4) mem.group_instance_id = Opt(nulls, "inst");
      grp.members.push_back(mem);
    }
    if (v >= 3) grp.authorized_operations = 0x1f;
    m.groups.push_back(grp);
  }
}

void Fill(ListGroupsRequest& m, int16_t v, bool) {
  if (v >= 4) m.states_filter = {"Stable", "Empty"};
}
void Fill(ListGroupsResponse& m, int16_t v, bool) {
  if (v >= 1) m.throttle_time_ms = 6;
  m.error_code = 14;
  for (int i = 0; i < 2; ++i) {
    ListGroupsResponse::Group g{.group_id = "g" + std::to_string(i), .protocol_type = "consumer"};
    if (v >= 4) g.group_state = "Stable";
    m.groups.push_back(g);
  }
}

void Fill(OffsetCommitRequest& m, int16_t v, bool nulls) {
  m.group_id = "grp";
  if (v >= 1) {
    m.generation_id = 6;
    m.member_id = "m1";
  }
  if (v >= 7) m.group_instance_id = Opt(nulls, "inst");
  if (v >= 2 && v <= 4) m.retention_time_ms = 86400000;
  for (const char* name : {"t1", "t2"}) {
    OffsetCommitRequest::Topic t{.name = name};
    for (int32_t i = 0; i < 2; ++i) {
      OffsetCommitRequest::Partition p{.partition_index = i, .committed_offset = 42 + i};
      if (v >= 6) p.committed_leader_epoch = 3;
      if (v == 1) p.commit_timestamp = 1700000000000;
      p.committed_metadata = Opt(nulls, "meta");
      t.partitions.push_back(p);
    }
    m.topics.push_back(t);
  }
}
void Fill(OffsetCommitResponse& m, int16_t v, bool) {
  if (v >= 3) m.throttle_time_ms = 7;
  m.topics = {{"t1", {{0, 0}, {1, 12}}}, {"t2", {{0, 25}, {3, 0}}}};
}

void Fill(OffsetFetchRequest& m, int16_t v, bool nulls) {
  std::vector<OffsetFetchRequest::Topic> topics = {{"t1", {0, 1}}, {"t2", {2, 3}}};
  if (v <= 7) {
    m.group_id = "grp";
    if (!(nulls && v >= 2)) m.topics = topics;
  }
  if (v >= 8) {
    OffsetFetchRequest::Group a{.group_id = "g1"};
    if (!nulls) a.topics = topics;
    OffsetFetchRequest::Group b{.group_id = "g2", .topics = topics};
    m.groups = {a, b};
  }
  if (v >= 7) m.require_stable = true;
}
void Fill(OffsetFetchResponse& m, int16_t v, bool nulls) {
  if (v >= 3) m.throttle_time_ms = 8;
  std::vector<OffsetFetchResponse::Topic> topics;
  for (const char* name : {"t1", "t2"}) {
    OffsetFetchResponse::Topic t{.name = name};
    for (int32_t i = 0; i < 2; ++i) {
      OffsetFetchResponse::Partition p{.partition_index = i, .committed_offset = 100 + i};
      if (v >= 5) p.committed_leader_epoch = 2;
      p.metadata = Opt(nulls, "meta");
      p.error_code = 88;
      t.partitions.push_back(p);
    }
    topics.push_back(t);
  }
  if (v <= 7) {
    m.topics = topics;
    if (v >= 2) m.error_code = 16;
  }
  if (v >= 8) m.groups = {{"g1", topics, 16}, {"g2", topics, 0}};
}

void Fill(DeleteGroupsRequest& m, int16_t, bool) { m.groups_names = {"g1", "g2"}; }
void Fill(DeleteGroupsResponse& m, int16_t, bool) {
  m.throttle_time_ms = 9;
  m.results = {{"g1", 0}, {"g2", 68}};
}

void Fill(OffsetDeleteRequest& m, int16_t, bool) {
  m.group_id = "grp";
  m.topics = {{"t1", {{0}, {1}}}, {"t2", {{2}, {3}}}};
}
void Fill(OffsetDeleteResponse& m, int16_t, bool) {
  m.error_code = 86;
  m.throttle_time_ms = 10;
  m.topics = {{"t1", {{0, 0}, {1, 86}}}, {"t2", {{2, 3}, {3, 0}}}};
}

// -------------------------------------------------------- round-trip tests

template <class M>
void ExpectSame(const M& a, const M& b) {
  EXPECT_TRUE(a == b);
}
// Produce structs (shared header) have no operator==: compare what matters.
void ExpectSame(const ProduceRequest& a, const ProduceRequest& b) {
  EXPECT_EQ(a.transactional_id, b.transactional_id);
  EXPECT_EQ(a.acks, b.acks);
  EXPECT_EQ(a.timeout_ms, b.timeout_ms);
  ASSERT_EQ(a.topics.size(), b.topics.size());
  for (size_t i = 0; i < a.topics.size(); ++i) {
    EXPECT_EQ(a.topics[i].name, b.topics[i].name);
    ASSERT_EQ(a.topics[i].partitions.size(), b.topics[i].partitions.size());
    for (size_t j = 0; j < a.topics[i].partitions.size(); ++j) {
      EXPECT_EQ(a.topics[i].partitions[j].index, b.topics[i].partitions[j].index);
      EXPECT_TRUE(a.topics[i].partitions[j].records == b.topics[i].partitions[j].records);
    }
  }
}
void ExpectSame(const ProduceResponse& a, const ProduceResponse& b) {
  EXPECT_EQ(a.throttle_time_ms, b.throttle_time_ms);
  ASSERT_EQ(a.topics.size(), b.topics.size());
  for (size_t i = 0; i < a.topics.size(); ++i) {
    EXPECT_EQ(a.topics[i].name, b.topics[i].name);
    ASSERT_EQ(a.topics[i].partitions.size(), b.topics[i].partitions.size());
    for (size_t j = 0; j < a.topics[i].partitions.size(); ++j) {
      const auto& p = a.topics[i].partitions[j];
      const auto& q = b.topics[i].partitions[j];
      EXPECT_EQ(p.index, q.index);
      EXPECT_EQ(p.error_code, q.error_code);
      EXPECT_EQ(p.base_offset, q.base_offset);
      EXPECT_EQ(p.log_append_time_ms, q.log_append_time_ms);
      EXPECT_EQ(p.log_start_offset, q.log_start_offset);
      EXPECT_EQ(p.error_message, q.error_message);
      ASSERT_EQ(p.record_errors.size(), q.record_errors.size());
      for (size_t k = 0; k < p.record_errors.size(); ++k) {
        EXPECT_EQ(p.record_errors[k].batch_index, q.record_errors[k].batch_index);
        EXPECT_EQ(p.record_errors[k].message, q.record_errors[k].message);
      }
      ASSERT_EQ(p.current_leader.has_value(), q.current_leader.has_value());
      if (p.current_leader) {
        EXPECT_EQ(p.current_leader->leader_id, q.current_leader->leader_id);
        EXPECT_EQ(p.current_leader->leader_epoch, q.current_leader->leader_epoch);
      }
    }
  }
  ASSERT_EQ(a.node_endpoints.has_value(), b.node_endpoints.has_value());
  if (a.node_endpoints) {
    ASSERT_EQ(a.node_endpoints->size(), b.node_endpoints->size());
    for (size_t i = 0; i < a.node_endpoints->size(); ++i) {
      const auto& x = (*a.node_endpoints)[i];
      const auto& y = (*b.node_endpoints)[i];
      EXPECT_EQ(x.node_id, y.node_id);
      EXPECT_EQ(x.host, y.host);
      EXPECT_EQ(x.port, y.port);
      EXPECT_EQ(x.rack, y.rack);
    }
  }
}
void ExpectSame(const ApiVersionsResponse& a, const ApiVersionsResponse& b) {
  EXPECT_EQ(a.error_code, b.error_code);
  EXPECT_EQ(a.throttle_time_ms, b.throttle_time_ms);
  ASSERT_EQ(a.api_keys.size(), b.api_keys.size());
  for (size_t i = 0; i < a.api_keys.size(); ++i) {
    EXPECT_EQ(a.api_keys[i].api_key, b.api_keys[i].api_key);
    EXPECT_EQ(a.api_keys[i].min_version, b.api_keys[i].min_version);
    EXPECT_EQ(a.api_keys[i].max_version, b.api_keys[i].max_version);
  }
}
void ExpectSame(const ApiVersionsRequest& a, const ApiVersionsRequest& b) {
  EXPECT_EQ(a.client_software_name, b.client_software_name);
  EXPECT_EQ(a.client_software_version, b.client_software_version);
}

// Round-trips request and response of one API at every supported version,
// once with every nullable field set and once with them null.
template <class Req, class Resp>
void RoundTripAllVersions() {
  for (int16_t v = Req::kMinVersion; v <= Req::kMaxVersion; ++v) {
    const bool flex = IsFlexible<Req>(v);
    for (bool nulls : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << "api " << Req::kApiKey << " v" << v << (nulls ? " nulls" : " values"));
      Req req;
      Fill(req, v, nulls);
      auto dreq = RoundTrip(req, v, flex);
      ExpectSame(req, dreq.msg);
      Resp resp;
      Fill(resp, v, nulls);
      auto dresp = RoundTrip(resp, v, flex);
      ExpectSame(resp, dresp.msg);
    }
  }
}

TEST(MessagesRoundTrip, ConsumerGroupHeartbeat) {
  RoundTripAllVersions<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse>();
}
TEST(MessagesRoundTrip, ConsumerGroupDescribe) {
  RoundTripAllVersions<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse>();
}
// A null assignment is Kafka's nullable struct: one byte -1, nothing after.
TEST(MessagesWire, ConsumerGroupHeartbeatResponseWithoutAnAssignment) {
  ConsumerGroupHeartbeatResponse r;
  r.member_epoch = 2;
  r.heartbeat_interval_ms = 5000;
  EXPECT_EQ(EncodeAt(r, 1, true), Hex("00000000 0000 00 00 00000002 00001388 ff 00"));
}

TEST(MessagesRoundTrip, ApiVersions) {
  RoundTripAllVersions<ApiVersionsRequest, ApiVersionsResponse>();
}
TEST(MessagesRoundTrip, Produce) { RoundTripAllVersions<ProduceRequest, ProduceResponse>(); }
TEST(MessagesRoundTrip, Metadata) { RoundTripAllVersions<MetadataRequest, MetadataResponse>(); }
TEST(MessagesRoundTrip, Fetch) { RoundTripAllVersions<FetchRequest, FetchResponse>(); }
TEST(MessagesRoundTrip, ListOffsets) {
  RoundTripAllVersions<ListOffsetsRequest, ListOffsetsResponse>();
}
TEST(MessagesRoundTrip, Envelope) { RoundTripAllVersions<EnvelopeRequest, EnvelopeResponse>(); }
TEST(MessagesRoundTrip, DescribeTopicPartitions) {
  RoundTripAllVersions<DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse>();
}
TEST(MessagesRoundTrip, ElectLeaders) {
  RoundTripAllVersions<ElectLeadersRequest, ElectLeadersResponse>();
}
TEST(MessagesRoundTrip, CreateTopics) {
  RoundTripAllVersions<CreateTopicsRequest, CreateTopicsResponse>();
}
TEST(MessagesRoundTrip, DeleteTopics) {
  RoundTripAllVersions<DeleteTopicsRequest, DeleteTopicsResponse>();
}
TEST(MessagesRoundTrip, DeleteRecords) {
  RoundTripAllVersions<DeleteRecordsRequest, DeleteRecordsResponse>();
}
TEST(MessagesRoundTrip, InitProducerId) {
  RoundTripAllVersions<InitProducerIdRequest, InitProducerIdResponse>();
}
TEST(MessagesRoundTrip, OffsetForLeaderEpoch) {
  RoundTripAllVersions<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse>();
}
TEST(MessagesRoundTrip, DescribeConfigs) {
  RoundTripAllVersions<DescribeConfigsRequest, DescribeConfigsResponse>();
}
TEST(MessagesRoundTrip, AlterConfigs) {
  RoundTripAllVersions<AlterConfigsRequest, AlterConfigsResponse>();
}
TEST(MessagesRoundTrip, CreatePartitions) {
  RoundTripAllVersions<CreatePartitionsRequest, CreatePartitionsResponse>();
}
TEST(MessagesRoundTrip, IncrementalAlterConfigs) {
  RoundTripAllVersions<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse>();
}
TEST(MessagesRoundTrip, AlterPartitionReassignments) {
  RoundTripAllVersions<AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse>();
}
TEST(MessagesRoundTrip, ListPartitionReassignments) {
  RoundTripAllVersions<ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse>();
}
TEST(MessagesRoundTrip, DescribeLogDirs) {
  RoundTripAllVersions<DescribeLogDirsRequest, DescribeLogDirsResponse>();
}
TEST(MessagesRoundTrip, UnregisterBroker) {
  RoundTripAllVersions<UnregisterBrokerRequest, UnregisterBrokerResponse>();
}
TEST(MessagesRoundTrip, DescribeQuorum) {
  RoundTripAllVersions<DescribeQuorumRequest, DescribeQuorumResponse>();
}
TEST(MessagesRoundTrip, DescribeCluster) {
  RoundTripAllVersions<DescribeClusterRequest, DescribeClusterResponse>();
}
TEST(MessagesRoundTrip, FindCoordinator) {
  RoundTripAllVersions<FindCoordinatorRequest, FindCoordinatorResponse>();
}
TEST(MessagesRoundTrip, JoinGroup) { RoundTripAllVersions<JoinGroupRequest, JoinGroupResponse>(); }
TEST(MessagesRoundTrip, Heartbeat) { RoundTripAllVersions<HeartbeatRequest, HeartbeatResponse>(); }
TEST(MessagesRoundTrip, LeaveGroup) {
  RoundTripAllVersions<LeaveGroupRequest, LeaveGroupResponse>();
}
TEST(MessagesRoundTrip, SyncGroup) { RoundTripAllVersions<SyncGroupRequest, SyncGroupResponse>(); }
TEST(MessagesRoundTrip, DescribeGroups) {
  RoundTripAllVersions<DescribeGroupsRequest, DescribeGroupsResponse>();
}
TEST(MessagesRoundTrip, ListGroups) {
  RoundTripAllVersions<ListGroupsRequest, ListGroupsResponse>();
}
TEST(MessagesRoundTrip, OffsetCommit) {
  RoundTripAllVersions<OffsetCommitRequest, OffsetCommitResponse>();
}
TEST(MessagesRoundTrip, OffsetFetch) {
  RoundTripAllVersions<OffsetFetchRequest, OffsetFetchResponse>();
}
TEST(MessagesRoundTrip, DeleteGroups) {
  RoundTripAllVersions<DeleteGroupsRequest, DeleteGroupsResponse>();
}
TEST(MessagesRoundTrip, OffsetDelete) {
  RoundTripAllVersions<OffsetDeleteRequest, OffsetDeleteResponse>();
}

// Spot checks that specific fields land where the spec puts them (the
// round trips above compare whole structs; these read named fields).
TEST(MessagesRoundTrip, KeyFieldsSurvive) {
  MetadataResponse md;
  Fill(md, 12, /*nulls=*/true);
  auto d = RoundTrip(md, 12, true);
  ASSERT_EQ(d.msg.topics.size(), 2u);
  EXPECT_FALSE(d.msg.topics[1].name.has_value());
  EXPECT_EQ(d.msg.topics[1].topic_id, Id(41));
  EXPECT_EQ(d.msg.topics[0].partitions[1].offline_replicas, (std::vector<int32_t>{2, 3}));
  EXPECT_FALSE(d.msg.cluster_id.has_value());

  FetchResponse fr;
  Fill(fr, 11, false);
  auto f = RoundTrip(fr, 11, false);
  ASSERT_EQ(f.msg.responses.size(), 2u);
  const auto& p = f.msg.responses[1].partitions[1];
  EXPECT_EQ(p.preferred_read_replica, 2);
  ASSERT_TRUE(p.aborted_transactions.has_value());
  EXPECT_EQ((*p.aborted_transactions)[1].first_offset, 420);
  EXPECT_EQ(Bytes(p.records.view.begin(), p.records.view.end()), Blob(1));

  OffsetFetchRequest of;
  Fill(of, 8, true);
  auto o = RoundTrip(of, 8, true);
  ASSERT_EQ(o.msg.groups.size(), 2u);
  EXPECT_FALSE(o.msg.groups[0].topics.has_value());
  EXPECT_EQ(o.msg.groups[1].topics->at(1).partition_indexes, (std::vector<int32_t>{2, 3}));
  EXPECT_TRUE(o.msg.require_stable);
}

// A nullable-only-in-later-versions field is written non-null in the older
// versions even when absent (as "" / an empty array).
TEST(MessagesRoundTrip, NullWhereNotNullableEncodesEmpty) {
  JoinGroupResponse j;  // protocol_name nullable from v7 only
  Bytes b = EncodeAt(j, 6, true);
  // throttle(4) error(2) generation(4) protocol_name "" = compact len 1
  EXPECT_EQ(b[10], 0x01);
  Bytes b7 = EncodeAt(j, 7, true);
  // v7: protocol_type null (0x00) then protocol_name null (0x00)
  EXPECT_EQ(b7[10], 0x00);
  EXPECT_EQ(b7[11], 0x00);

  MetadataRequest m;  // topics null; v0 has no null: empty array
  EXPECT_EQ(EncodeAt(m, 0, false), Hex("00000000"));
  EXPECT_EQ(EncodeAt(m, 1, false), Hex("ffffffff"));
}

// ------------------------------------------------------------ golden bytes

TEST(MessagesGolden, ApiVersionsRequestV3) {
  ApiVersionsRequest r{.client_software_name = "strata", .client_software_version = "1.0"};
  Bytes want = Hex("07 737472617461 04 312e30 00");
  EXPECT_EQ(EncodeAt(r, 3, true), want);
  auto d = Decode<ApiVersionsRequest>(MutableByteView(want), 3, true);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->client_software_name, "strata");
  EXPECT_EQ(d->client_software_version, "1.0");
}

TEST(MessagesGolden, MetadataRequestV1OneTopic) {
  MetadataRequest r;
  r.topics = {{MetadataRequest::Topic{.name = "foo"}}};
  Bytes want = Hex("00000001 0003 666f6f");
  EXPECT_EQ(EncodeAt(r, 1, false), want);
  auto d = Decode<MetadataRequest>(MutableByteView(want), 1, false);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(d->topics.has_value());
  ASSERT_EQ(d->topics->size(), 1u);
  EXPECT_EQ((*d->topics)[0].name, "foo");
}

TEST(MessagesGolden, MetadataRequestV9Flexible) {
  MetadataRequest r;
  r.topics = {{MetadataRequest::Topic{.name = "foo"}}};
  r.allow_auto_topic_creation = true;
  r.include_cluster_authorized_operations = false;
  r.include_topic_authorized_operations = true;
  // compact array (1+1), compact string (3+1) "foo", topic tags, allow_auto,
  // include_cluster_ops (v8-10), include_topic_ops, request tags.
  Bytes want = Hex("02 04 666f6f 00 01 00 01 00");
  EXPECT_EQ(EncodeAt(r, 9, true), want);
  auto d = Decode<MetadataRequest>(MutableByteView(want), 9, true);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d->topics)[0].name, "foo");
  EXPECT_TRUE(d->include_topic_authorized_operations);

  // Null topic list is a compact length of 0.
  Bytes all = Hex("00 01 00 00 00");
  auto n = Decode<MetadataRequest>(MutableByteView(all), 9, true);
  ASSERT_TRUE(n.ok());
  EXPECT_FALSE(n->topics.has_value());

  // A tagged field in the topic is skipped (tag 5, 2 bytes).
  Bytes tagged = Hex("02 04 666f6f 01 05 02 aabb 01 00 01 00");
  auto t = Decode<MetadataRequest>(MutableByteView(tagged), 9, true);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ((*t->topics)[0].name, "foo");
  EXPECT_TRUE(t->include_topic_authorized_operations);
}

// v1 puts AllowReplicationFactorChange after TimeoutMs; a null Replicas
// (cancel) is a compact length of 0, distinct from an empty list (1).
TEST(MessagesGolden, AlterPartitionReassignmentsRequestCancel) {
  AlterPartitionReassignmentsRequest r;
  r.timeout_ms = 5000;
  r.allow_replication_factor_change = false;
  r.topics = {{"foo", {{0, std::vector<int32_t>{1, 2}}, {1, std::nullopt}}}};
  Bytes v1 =
      Hex("00001388 00 02 04 666f6f 03 00000000 03 00000001 00000002 00 00000001 00 00 00 00");
  EXPECT_EQ(EncodeAt(r, 1, true), v1);
  auto d = Decode<AlterPartitionReassignmentsRequest>(MutableByteView(v1), 1, true);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->allow_replication_factor_change);
  ASSERT_EQ(d->topics.size(), 1u);
  ASSERT_EQ(d->topics[0].partitions.size(), 2u);
  EXPECT_EQ(d->topics[0].partitions[0].replicas, (std::vector<int32_t>{1, 2}));
  EXPECT_FALSE(d->topics[0].partitions[1].replicas.has_value());

  Bytes v0 = Hex("00001388 02 04 666f6f 02 00000001 01 00 00 00");
  auto d0 = Decode<AlterPartitionReassignmentsRequest>(MutableByteView(v0), 0, true);
  ASSERT_TRUE(d0.ok());
  EXPECT_TRUE(d0->allow_replication_factor_change);  // absent in v0: the default
  ASSERT_TRUE(d0->topics[0].partitions[0].replicas.has_value());
  EXPECT_TRUE(d0->topics[0].partitions[0].replicas->empty());
}

// Null topics (all) is -1 in v1 and a compact length of 0 in v2+; v3 puts
// ErrorCode after ThrottleTimeMs and v4 the volume sizes after each
// directory's topics.
TEST(MessagesGolden, DescribeLogDirs) {
  DescribeLogDirsRequest all;
  EXPECT_EQ(EncodeAt(all, 1, false), Hex("ffffffff"));
  EXPECT_EQ(EncodeAt(all, 4, true), Hex("00 00"));
  DescribeLogDirsRequest some;
  some.topics = std::vector<DescribeLogDirsRequest::Topic>{{"foo", {1}}};
  EXPECT_EQ(EncodeAt(some, 1, false), Hex("00000001 0003 666f6f 00000001 00000001"));
  Bytes v2 = Hex("02 04 666f6f 02 00000001 00 00");
  EXPECT_EQ(EncodeAt(some, 2, true), v2);
  auto d = Decode<DescribeLogDirsRequest>(MutableByteView(v2), 2, true);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, some);

  DescribeLogDirsResponse r;
  r.results = {{0, "/d", {{"foo", {{1, 100, 2, false}}}}, 1000, 400}};
  const std::string partition = "00000001 0000000000000064 0000000000000002 00 00";
  EXPECT_EQ(EncodeAt(r, 1, false),
            Hex("00000000 00000001 0000 0002 2f64 00000001 0003 666f6f 00000001"
                "00000001 0000000000000064 0000000000000002 00"));
  EXPECT_EQ(EncodeAt(r, 2, true),
            Hex("00000000 02 0000 03 2f64 02 04 666f6f 02" + partition + "00 00 00"));
  EXPECT_EQ(EncodeAt(r, 3, true),
            Hex("00000000 0000 02 0000 03 2f64 02 04 666f6f 02" + partition + "00 00 00"));
  Bytes v4 = Hex("00000000 0000 02 0000 03 2f64 02 04 666f6f 02" + partition +
                 "00 00000000000003e8 0000000000000190 00 00");
  EXPECT_EQ(EncodeAt(r, 4, true), v4);
  auto d4 = Decode<DescribeLogDirsResponse>(MutableByteView(v4), 4, true);
  ASSERT_TRUE(d4.ok());
  EXPECT_EQ(d4->results[0].total_bytes, 1000);
  EXPECT_EQ(d4->results[0].usable_bytes, 400);
  EXPECT_EQ(d4->results[0].topics[0].partitions[0].partition_size, 100);
  EXPECT_EQ(d4->results[0].topics[0].partitions[0].offset_lag, 2);
}

TEST(MessagesGolden, MetadataRequestV12NullNameWithId) {
  MetadataRequest r;
  r.topics = {{MetadataRequest::Topic{.topic_id = Id(0), .name = std::nullopt}}};
  r.include_topic_authorized_operations = false;
  Bytes want = Hex("02 000102030405060708090a0b0c0d0e0f 00 00 01 00 00");
  EXPECT_EQ(EncodeAt(r, 12, true), want);
}

// KIP-951's tagged fields, byte for byte: partition tag 0 CurrentLeader and
// top-level tag 0 NodeEndpoints; an unknown tag before them is skipped.
TEST(MessagesGolden, ProduceResponseV10TaggedLeader) {
  ProduceResponse m;
  ProduceResponse::Partition p;
  p.index = 0;
  p.error_code = 6;
  p.current_leader = {{2, 5}};
  m.topics.push_back({"t", {p}});
  m.node_endpoints = {{{2, "h", 9, std::nullopt}}};
  Bytes got = EncodeAt(m, 10, true);
  // ... error_message null (0), then the partition's tags: 1 field, tag 0,
  // size 9: leader 2, epoch 5, empty tags.
  const Bytes leader = {0x00, 0x01, 0x00, 0x09, 0, 0, 0, 2, 0, 0, 0, 5, 0x00};
  ASSERT_NE(std::search(got.begin(), got.end(), leader.begin(), leader.end()), got.end());
  // The tail: throttle (0), then 1 field, tag 0, size 13: array of 1, node 2,
  // host "h", port 9, rack null, empty tags.
  const Bytes tail = {0, 0, 0,    0,   0x01, 0x00, 0x0d, 0x02, 0,    0,
                      0, 2, 0x02, 'h', 0,    0,    0,    9,    0x00, 0x00};
  ASSERT_GE(got.size(), tail.size());
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), got.end() - tail.size()));

  // Unknown tag 5 ahead of tag 0 in the top-level section: skipped.
  Bytes wire(got.begin(), got.end() - 16);
  const Bytes with_unknown = {0x02, 0x05, 0x01, 0x7f, 0x00, 0x0d, 0x02, 0,    0,   0,
                              2,    0x02, 'h',  0,    0,    0,    9,    0x00, 0x00};
  wire.insert(wire.end(), with_unknown.begin(), with_unknown.end());
  WireReader r(MutableByteView(wire.data(), wire.size()), true);
  ProduceResponse d;
  d.Serde(r, 10);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_TRUE(d.node_endpoints.has_value());
  EXPECT_EQ((*d.node_endpoints)[0].host, "h");
  ASSERT_TRUE(d.topics[0].partitions[0].current_leader.has_value());
  EXPECT_EQ(d.topics[0].partitions[0].current_leader->leader_epoch, 5);
}

TEST(MessagesGolden, ProduceRequestV3HeaderAndBody) {
  RequestHeader h{.api_key = 0, .api_version = 3, .correlation_id = 7, .client_id = "client"};
  ProduceRequest r;
  r.transactional_id = std::nullopt;
  r.acks = -1;
  r.timeout_ms = 30000;
  ProduceRequest::Topic t{.name = "t"};
  ProduceRequest::Partition p{.index = 0};
  p.records.Own(Hex("aabbcc"));
  t.partitions.push_back(std::move(p));
  r.topics.push_back(std::move(t));

  Bytes out;
  WireWriter w(out, false);
  WriteRequestHeader(w, h);
  r.Serde(w, 3);
  Bytes want =
      Hex("0000 0003 00000007 0006 636c69656e74"  // header v1
          "ffff ffff 00007530"                    // txn id null, acks -1, timeout
          "00000001 0001 74"                      // 1 topic "t"
          "00000001 00000000 00000003 aabbcc");   // partition 0, 3 record bytes
  EXPECT_EQ(out, want);

  WireReader rd(MutableByteView(want), false);
  RequestHeader h2;
  ReadRequestHeader(rd, h2);
  ProduceRequest r2;
  r2.Serde(rd, 3);
  ASSERT_TRUE(rd.ok()) << rd.error();
  EXPECT_EQ(h2.correlation_id, 7);
  EXPECT_EQ(h2.client_id, "client");
  EXPECT_EQ(r2.acks, -1);
  ASSERT_EQ(r2.topics.size(), 1u);
  EXPECT_EQ(Bytes(r2.topics[0].partitions[0].records.view.begin(),
                  r2.topics[0].partitions[0].records.view.end()),
            Hex("aabbcc"));
}

TEST(MessagesGolden, FetchResponseV12) {
  FetchResponse r;
  r.throttle_time_ms = 5;
  r.error_code = 0;
  r.session_id = 42;
  FetchResponse::Partition p;
  p.partition_index = 1;
  p.high_watermark = 100;
  p.last_stable_offset = 90;
  p.log_start_offset = 0;
  p.aborted_transactions = {{FetchResponse::AbortedTransaction{7, 80}}};
  p.preferred_read_replica = -1;
  p.records.Own(Hex("aabbcc"));
  FetchResponse::Partition q;
  q.partition_index = 2;
  q.error_code = 1;
  q.records.null = true;  // aborted_transactions stays null
  FetchResponse::Topic t{.topic = "t"};
  t.partitions.push_back(std::move(p));
  t.partitions.push_back(std::move(q));
  r.responses.push_back(std::move(t));

  Bytes want =
      Hex("00000005 0000 0000002a"  // throttle, error, session id
          "02 02 74 03"             // 1 topic "t", 2 partitions
          // partition 1
          "00000001 0000 0000000000000064 000000000000005a 0000000000000000"
          "02 0000000000000007 0000000000000050 00"  // 1 aborted txn + its tags
          "ffffffff 04 aabbcc 00"                    // preferred replica, records, tags
          // partition 2: null aborted list, null records
          "00000002 0001 0000000000000000 ffffffffffffffff ffffffffffffffff"
          "00 ffffffff 00 00"
          "00 00");  // topic tags, response tags
  EXPECT_EQ(EncodeAt(r, 12, true), want);

  auto d = Decode<FetchResponse>(MutableByteView(want), 12, true);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->session_id, 42);
  const auto& parts = d->responses.at(0).partitions;
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].last_stable_offset, 90);
  EXPECT_EQ(parts[0].aborted_transactions->at(0).first_offset, 80);
  EXPECT_EQ(Bytes(parts[0].records.view.begin(), parts[0].records.view.end()), Hex("aabbcc"));
  EXPECT_FALSE(parts[1].aborted_transactions.has_value());
  EXPECT_TRUE(parts[1].records.null);
}

// ------------------------------------------------------------ registry

TEST(RequestRegistry, ListsEveryApiWithStructRanges) {
  const auto& apis = SupportedApis();
  ASSERT_EQ(apis.size(), 55u);
  for (size_t i = 1; i < apis.size(); ++i) EXPECT_LT(apis[i - 1].key, apis[i].key);
  const ApiRange* md = FindApi(3);
  ASSERT_NE(md, nullptr);
  EXPECT_EQ(md->min, 0);
  EXPECT_EQ(md->max, 12);
  EXPECT_EQ(md->first_flexible, 9);
  const ApiRange* fetch = FindApi(1);
  ASSERT_NE(fetch, nullptr);
  EXPECT_EQ(fetch->min, 4);
  EXPECT_EQ(fetch->max, 12);
  const ApiRange* log_dirs = FindApi(35);
  ASSERT_NE(log_dirs, nullptr);
  EXPECT_EQ(log_dirs->min, 0);
  EXPECT_EQ(log_dirs->max, 4);
  EXPECT_EQ(log_dirs->first_flexible, 2);
  const ApiRange* sasl = FindApi(36);
  ASSERT_NE(sasl, nullptr);
  EXPECT_EQ(sasl->max, 2);
  EXPECT_EQ(sasl->first_flexible, 2);
  EXPECT_FALSE(RequestIsFlexible(17, 1));   // SaslHandshake is never flexible
  const ApiRange* telemetry = FindApi(71);  // KIP-714
  ASSERT_NE(telemetry, nullptr);
  EXPECT_EQ(telemetry->max, 0);
  EXPECT_EQ(telemetry->first_flexible, 0);
  EXPECT_EQ(FindApi(4), nullptr);  // LeaderAndIsr: not a client API
  EXPECT_EQ(FindApi(-1), nullptr);
  EXPECT_EQ(FindApi(1000), nullptr);
}

TEST(RequestRegistry, Flexibility) {
  EXPECT_FALSE(RequestIsFlexible(3, 8));
  EXPECT_TRUE(RequestIsFlexible(3, 9));
  EXPECT_TRUE(RequestIsFlexible(3, 13));  // newer than we support: still flexible
  EXPECT_TRUE(RequestIsFlexible(60, 0));
  EXPECT_TRUE(RequestIsFlexible(18, 3));
  EXPECT_FALSE(RequestIsFlexible(18, 2));
  EXPECT_FALSE(RequestIsFlexible(47, 0));
  EXPECT_FALSE(RequestIsFlexible(47, 200));  // OffsetDelete has no flexible version
  EXPECT_FALSE(RequestIsFlexible(999, 12));
}

TEST(RequestRegistry, DecodeRequestBodyErrors) {
  Bytes ok = Hex("00000001 0003 666f6f");
  EXPECT_TRUE(DecodeRequestBody(3, 1, MutableByteView(ok)).ok());
  Status unknown = DecodeRequestBody(4, 0, MutableByteView(ok));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, Errc::kUnsupported);
  Status too_new = DecodeRequestBody(3, 13, MutableByteView(ok));
  ASSERT_FALSE(too_new.ok());
  EXPECT_EQ(too_new.error().code, Errc::kUnsupported);
  Status too_old = DecodeRequestBody(1, 3, MutableByteView(ok));  // Fetch starts at v4
  ASSERT_FALSE(too_old.ok());
  EXPECT_EQ(too_old.error().code, Errc::kUnsupported);
  Bytes bad = Hex("00000002 0003 666f6f");  // second topic missing
  Status corrupt = DecodeRequestBody(3, 1, MutableByteView(bad));
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.error().code, Errc::kCorrupt);
}

// ------------------------------------------------------ hostile input

// Every strict prefix of a valid body must be rejected as corrupt.
template <class M>
void ExpectTruncationFails() {
  for (int16_t v = M::kMinVersion; v <= M::kMaxVersion; ++v) {
    for (bool nulls : {false, true}) {
      M m;
      Fill(m, v, nulls);
      Bytes full = EncodeAt(m, v, IsFlexible<M>(v));
      Bytes copy = full;
      ASSERT_TRUE(DecodeRequestBody(M::kApiKey, v, MutableByteView(copy)).ok())
          << "api " << M::kApiKey << " v" << v;
      for (size_t len = 0; len < full.size(); ++len) {
        Bytes prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
        Status st = DecodeRequestBody(M::kApiKey, v, MutableByteView(prefix));
        ASSERT_FALSE(st.ok()) << "api " << M::kApiKey << " v" << v << " len " << len;
        EXPECT_EQ(st.error().code, Errc::kCorrupt);
      }
    }
  }
}

template <class... Ms>
void TruncateAll(RequestList<Ms...>) {
  (ExpectTruncationFails<Ms>(), ...);
}

TEST(MessagesHostile, TruncatedRequestsFail) { TruncateAll(AllRequests{}); }

// Decodes `body` with the probe armed; returns the largest allocation made.
size_t MaxAllocDuring(int16_t key, int16_t version, Bytes body, Status* st) {
  g_probe_max = 0;
  g_probe_armed = true;
  *st = DecodeRequestBody(key, version, MutableByteView(body));
  g_probe_armed = false;
  return g_probe_max.load();
}

TEST(MessagesHostile, HugeLengthsFailWithoutAllocating) {
  struct Case {
    const char* what;
    int16_t key, version;
    std::string hex;
  };
  const Case cases[] = {
      {"metadata v1 array 2^31-1", 3, 1, "7fffffff 0003"},
      {"metadata v9 compact array 2^30-1", 3, 9, "8080808004 00"},
      {"metadata v9 compact array 2^32-2", 3, 9, "ffffffff0f 00"},
      {"metadata v1 negative array", 3, 1, "fffffffe"},
      {"fetch v4 nested partitions 2^31-16", 1, 4,
       "ffffffff 00000000 00000001 00100000 00 00000001 0001 74 7ffffff0 00"},
      {"describe groups v0 string array", 15, 0, "40000000 0001 61"},
      {"join group v0 string 32767", 11, 0, "7fff 6162"},
      {"sync group v0 bytes 2^31-1", 14, 0,
       "0001 67 00000001 0001 6d 00000001 0001 6d 7fffffff 00"},
      {"offset fetch v8 nested nullable array", 9, 8, "02 02 67 fffffff7 00"},
      {"tagged field size 2^32-1", 3, 9, "01 01 00 01 ffffffff0f"},
  };
  for (const Case& c : cases) {
    Status st;
    size_t max_alloc = MaxAllocDuring(c.key, c.version, Hex(c.hex), &st);
    ASSERT_FALSE(st.ok()) << c.what;
    EXPECT_EQ(st.error().code, Errc::kCorrupt) << c.what;
    EXPECT_LT(max_alloc, 1024u) << c.what;
  }
}

}  // namespace
}  // namespace strata::protocol
