#include "balancer/load_window.h"

#include <gtest/gtest.h>

#include "balancer/model_builder.h"

namespace strata::balancer {
namespace {

MetricsSample Sample(int32_t broker, int64_t ts, std::vector<PartitionSample> partitions,
                     int32_t part = 0, int32_t parts = 1) {
  MetricsSample s;
  s.broker = NodeId(broker);
  s.timestamp_ms = ts;
  s.window_ms = 10'000;
  s.part = part;
  s.parts = parts;
  s.partitions = std::move(partitions);
  return s;
}

PartitionSample P(const std::string& topic, int32_t partition, bool leader, double in, double out,
                  int64_t size) {
  PartitionSample p;
  p.topic = topic;
  p.partition = partition;
  p.leader = leader;
  p.bytes_in_per_sec = in;
  p.bytes_out_per_sec = out;
  p.messages_in_per_sec = in / 100;
  p.size_bytes = size;
  return p;
}

TEST(LoadWindowTest, SumsReplicasAndAveragesOverTheWindow) {
  LoadWindow w(2);
  w.Add(Sample(1, 10'000, {P("t", 0, true, 100, 50, 1000)}));
  w.Add(Sample(2, 10'000, {P("t", 0, false, 0, 30, 900)}));  // a follower serving consumers
  w.Add(Sample(1, 20'000, {P("t", 0, true, 300, 50, 2000)}));
  auto l = w.Load("t", 0);
  ASSERT_TRUE(l.has_value());
  EXPECT_DOUBLE_EQ(l->bytes_in, 200);  // (100 + 300) / 2
  EXPECT_DOUBLE_EQ(l->bytes_out, 80);  // 50 from the leader + 30 from the follower
  EXPECT_EQ(l->size, 2000);
  EXPECT_EQ(w.LastSampleMs(NodeId(1)), 20'000);
  EXPECT_EQ(w.LastSampleMs(NodeId(3)), 0);
  // Only the last two samples count.
  w.Add(Sample(1, 30'000, {P("t", 0, true, 500, 50, 2000)}));
  EXPECT_DOUBLE_EQ(w.Load("t", 0)->bytes_in, 400);
  EXPECT_FALSE(w.Load("t", 1).has_value());
}

TEST(LoadWindowTest, ASampleCountsOnceAllItsPartsAreIn) {
  LoadWindow w;
  w.Add(Sample(1, 10'000, {P("t", 0, true, 100, 0, 1)}, 0, 2));
  EXPECT_EQ(w.LastSampleMs(NodeId(1)), 0);
  EXPECT_FALSE(w.Load("t", 0).has_value());
  w.Add(Sample(1, 10'000, {P("t", 1, true, 100, 0, 1)}, 1, 2));
  EXPECT_EQ(w.LastSampleMs(NodeId(1)), 10'000);
  EXPECT_TRUE(w.Load("t", 0).has_value());
  EXPECT_TRUE(w.Load("t", 1).has_value());
  // A part of a newer sample whose other parts never come is dropped;
  // an older record than what is held is ignored.
  w.Add(Sample(1, 20'000, {P("t", 0, true, 900, 0, 1)}, 0, 2));
  w.Add(Sample(1, 5'000, {P("t", 0, true, 900, 0, 1)}));
  w.Add(Sample(1, 30'000, {P("t", 0, true, 100, 0, 1)}));
  EXPECT_DOUBLE_EQ(w.Load("t", 0)->bytes_in, 100);
  EXPECT_EQ(w.sample_count(), 2);
}

TEST(ModelBuilderTest, StatusesFromRegistrationFreshnessAndFailureTimeout) {
  LoadWindow w;
  for (int32_t b : {1, 2, 5})
    w.Add(Sample(b, 100'000, {P("t", 0, b == 1, b == 1 ? 100 : 0, 0, 1)}));
  w.Add(Sample(3, 10'000, {}));  // stale
  std::vector<BrokerTopology> brokers = {
      {NodeId(1), "", true, false, false, false, 0, {}},
      {NodeId(2), "", true, false, false, false, 0, {}},
      {NodeId(3), "", true, false, false, false, 0, {}},
      {NodeId(4), "", false, false, false, false, 30'000, {}},  // gone 70 s
      {NodeId(5), "", true, true, false, false, 0, {}},         // standby
      {NodeId(6), "", false, false, false, false, 90'000, {}},  // gone 10 s
  };
  std::vector<PartitionTopology> partitions = {
      {"t", 0, {NodeId(1), NodeId(4)}, NodeId(1), {NodeId(1)}, false},
      {"t", 1, {NodeId(2), NodeId(1)}, NodeId(2), {NodeId(2), NodeId(1)}, true}};
  ModelOptions o;
  o.now_ms = 100'000;
  BuiltModel built = BuildModel(brokers, partitions, w, o);
  const ClusterModel& m = built.model;
  auto status = [&](int32_t id) { return m.broker(m.IndexOf(NodeId(id))).status; };
  EXPECT_EQ(status(1), BrokerStatus::kActive);
  EXPECT_EQ(status(3), BrokerStatus::kStale);
  EXPECT_EQ(status(4), BrokerStatus::kDead);
  EXPECT_EQ(status(5), BrokerStatus::kStandby);
  EXPECT_EQ(status(6), BrokerStatus::kStale);
  EXPECT_EQ(built.dead, std::vector<NodeId>{NodeId(4)});
  EXPECT_DOUBLE_EQ(m.partition(0).load.bytes_in, 100);
  EXPECT_TRUE(m.partition(1).frozen);
  // A standby brought in by scaling is active.
  brokers[4].standby = false;
  EXPECT_EQ(BuildModel(brokers, partitions, w, o).model.broker(4).status, BrokerStatus::kActive);
  // Two overdue with one allowed: nobody is declared dead, and it says why.
  brokers[5].gone_since_ms = 10'000;
  BuiltModel too_many = BuildModel(brokers, partitions, w, ModelOptions{100'000});
  EXPECT_TRUE(too_many.dead.empty());
  EXPECT_NE(too_many.note.find("max.failed.brokers"), std::string::npos);
}

// A broker that left by a clean shutdown (a rolling restart) is waited for
// the shutdown grace, one that vanished for the failure timeout.
TEST(ModelBuilderTest, ABrokerThatLeftCleanlyGetsTheShutdownGrace) {
  LoadWindow w;
  for (int32_t b : {1, 2}) w.Add(Sample(b, 100'000, {}));
  std::vector<BrokerTopology> brokers = {
      {NodeId(1), "", true, false, false, false, 0, {}},
      {NodeId(2), "", true, false, false, false, 0, {}},
      {NodeId(3), "", false, false, false, false, 30'000, {}, /*left_cleanly=*/true},
  };
  ModelOptions o;
  o.now_ms = 100'000;  // gone 70 s
  o.failure_timeout_ms = 60'000;
  o.shutdown_grace_ms = 120'000;
  EXPECT_TRUE(BuildModel(brokers, {}, w, o).dead.empty());
  o.now_ms = 150'000;  // gone 120 s
  EXPECT_EQ(BuildModel(brokers, {}, w, o).dead, std::vector<NodeId>{NodeId(3)});
  // Vanished, the same broker is dead after the failure timeout.
  brokers[2].left_cleanly = false;
  o.now_ms = 100'000;
  EXPECT_EQ(BuildModel(brokers, {}, w, o).dead, std::vector<NodeId>{NodeId(3)});
  // A grace shorter than the failure timeout never shortens the wait.
  brokers[2].left_cleanly = true;
  o.shutdown_grace_ms = 1'000;
  EXPECT_EQ(FailureTimeoutOf(brokers[2], o), 60'000);
}

}  // namespace
}  // namespace strata::balancer
