// Tests of ClientQuotaManager: a throttled producer converging on its quota
// while an unquota'd one is never held back, sensor sharing by metric tags,
// the request-percentage conversion, config updates keeping history, idle
// sensor expiry, and the window bound that caps a consumer's fetch.
#include "broker/quota/client_quota_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "base/clock.h"

namespace strata::broker {
namespace {

constexpr double kMB = 1000 * 1000;

ClientQuotaEntity User(std::optional<std::string> user) {
  return {std::move(user), true, std::nullopt, false};
}
ClientQuotaEntity Client(std::optional<std::string> client) {
  return {std::nullopt, false, std::move(client), true};
}

TEST(ClientQuotaManagerTest, NoQuotaOfThisTypeMeansNoThrottleAndNoSensor) {
  ClientQuotaManager produce(QuotaType::kProduce);
  EXPECT_EQ(produce.RecordAndGetThrottleTimeMs("alice", "app", 100 * kMB, 0), 0);
  EXPECT_EQ(produce.sensor_count(), 0u);
  EXPECT_FALSE(produce.Bound("alice", "app").has_value());
  // A quota of another type does not enable this one.
  produce.UpdateConfigs({{User("alice"), {.consumer_byte_rate = 1}}});
  EXPECT_EQ(produce.RecordAndGetThrottleTimeMs("alice", "app", 100 * kMB, 0), 0);
  EXPECT_EQ(produce.sensor_count(), 0u);
}

struct SimulatedProducer {
  std::string user;
  int64_t next_send_ms = 0;
  std::vector<int64_t> sends_ms;
  int64_t max_throttle_ms = 0;

  double SentIn(int64_t from_ms, int64_t to_ms) const {
    return kMB * std::count_if(sends_ms.begin(), sends_ms.end(),
                               [&](int64_t t) { return t >= from_ms && t < to_ms; });
  }
};

// Producers sending 1 MB every 10 ms, each waiting out every throttle it gets
// (as its muted channel would make it, KIP-219), until `end_ms`.
void Simulate(ClientQuotaManager& manager, std::vector<SimulatedProducer>& producers,
              int64_t end_ms) {
  ManualClock clock(0);
  while (true) {
    auto next = std::min_element(producers.begin(), producers.end(),
                                 [](auto& a, auto& b) { return a.next_send_ms < b.next_send_ms; });
    if (next->next_send_ms >= end_ms) return;
    clock.Set(next->next_send_ms);
    const int64_t throttle =
        manager.RecordAndGetThrottleTimeMs(next->user, "producer-1", kMB, clock.NowMs());
    next->sends_ms.push_back(clock.NowMs());
    next->max_throttle_ms = std::max(next->max_throttle_ms, throttle);
    next->next_send_ms = clock.NowMs() + throttle + 10;
  }
}

// Alice (1 MB/s) is held to her quota; bob, without one, is recorded (quotas
// are on) but never throttled.
TEST(ClientQuotaManagerTest, AThrottledProducerAveragesItsQuota) {
  ClientQuotaManager produce(QuotaType::kProduce);
  produce.UpdateConfigs({{User("alice"), {.producer_byte_rate = kMB}}});
  std::vector<SimulatedProducer> producers{{"alice"}, {"bob"}};
  constexpr int64_t kSecond = 1000;
  Simulate(produce, producers, 300 * kSecond);
  const SimulatedProducer& alice = producers[0];
  const SimulatedProducer& bob = producers[1];

  // A new client's bucket starts full: 11 s (quota.window.num x
  // quota.window.size.seconds) of quota at once, as Kafka's first window
  // allows. After that she is held to the quota over any 30 s.
  const double first_30s = alice.SentIn(0, 30 * kSecond);
  EXPECT_GE(first_30s, 30 * kMB);
  EXPECT_LE(first_30s, 30 * kMB + 11 * kMB + kMB);
  EXPECT_NEAR(alice.SentIn(12 * kSecond, 42 * kSecond) / 30, kMB, 0.05 * kMB);
  EXPECT_NEAR(alice.SentIn(150 * kSecond, 180 * kSecond) / 30, kMB, 0.05 * kMB);
  EXPECT_NEAR(alice.SentIn(0, 300 * kSecond) / 300, kMB * (1 + 11.0 / 300), 0.01 * kMB);
  EXPECT_GT(alice.max_throttle_ms, 0);

  EXPECT_EQ(bob.max_throttle_ms, 0);
  EXPECT_EQ(bob.SentIn(0, 300 * kSecond), 30000 * kMB);
  EXPECT_EQ(produce.sensor_count(), 2u);
}

TEST(ClientQuotaManagerTest, ADefaultUserQuotaGivesEachUserItsOwnSensor) {
  ClientQuotaManager produce(QuotaType::kProduce);
  produce.UpdateConfigs({{User(std::nullopt), {.producer_byte_rate = kMB}}});
  // 11 MB: all of a new client's burst (11 s of 1 MB/s), not yet over.
  EXPECT_EQ(produce.RecordAndGetThrottleTimeMs("alice", "a", 11 * kMB, 0), 0);
  // Bob's 5 MB are his own.
  EXPECT_EQ(produce.RecordAndGetThrottleTimeMs("bob", "a", 5 * kMB, 0), 0);
  // Alice's other client shares her bucket: 1 MB over, 1 s.
  EXPECT_EQ(produce.RecordAndGetThrottleTimeMs("alice", "b", 1 * kMB, 0), 1000);
  EXPECT_EQ(produce.sensor_count(), 2u);
  EXPECT_EQ(produce.MetricTags("alice", "b"), (QuotaMetricTags{"alice", ""}));
}

TEST(ClientQuotaManagerTest, ADefaultClientQuotaGivesEachClientIdItsOwnSensor) {
  ClientQuotaManager fetch(QuotaType::kFetch);
  fetch.UpdateConfigs({{Client(std::nullopt), {.consumer_byte_rate = kMB}}});
  EXPECT_EQ(fetch.RecordAndGetThrottleTimeMs("alice", "a", 11 * kMB, 0), 0);
  EXPECT_EQ(fetch.RecordAndGetThrottleTimeMs("alice", "b", 5 * kMB, 0), 0);
  // Any user with client id "a" shares it.
  EXPECT_EQ(fetch.RecordAndGetThrottleTimeMs("bob", "a", 1 * kMB, 0), 1000);
  EXPECT_EQ(fetch.sensor_count(), 2u);
  // A throttled fetch takes its bytes back.
  fetch.Unrecord("bob", "a", 1 * kMB, 0);
  EXPECT_EQ(fetch.RecordAndGetThrottleTimeMs("bob", "a", 0, 0), 0);
  // 1 MB/s over 10 of the 11 windows.
  EXPECT_DOUBLE_EQ(fetch.MaxValueInQuotaWindow("bob", "a"), 10 * kMB);
}

// The window bound caps a consumer's fetch (Kafka's getMaxValueInQuotaWindow):
// samples - 1 windows' worth, so a capped fetch after a quiet window is never
// throttled for its size alone; what the manager lets through at once (a
// whole window, samples x window seconds) is a little more, and no further.
TEST(ClientQuotaManagerTest, TheWindowBoundIsWithinWhatAnIdleClientMayTakeAtOnce) {
  ClientQuotaManager fetch(QuotaType::kFetch, /*samples=*/5, /*sample_ms=*/2000);
  EXPECT_EQ(fetch.MaxValueInQuotaWindow("alice", "a"), std::numeric_limits<double>::max());
  fetch.UpdateConfigs({{User("alice"), {.consumer_byte_rate = 1000}}});
  const double bound = fetch.MaxValueInQuotaWindow("alice", "a");
  EXPECT_DOUBLE_EQ(bound, 1000 * 4 * 2.0);  // bound x (samples - 1) x window seconds
  EXPECT_EQ(fetch.MaxValueInQuotaWindow("bob", "a"), std::numeric_limits<double>::max());
  const double at_once = 1000 * 5 * 2.0;
  EXPECT_EQ(fetch.RecordAndGetThrottleTimeMs("alice", "a", bound, 0), 0);
  EXPECT_EQ(fetch.RecordAndGetThrottleTimeMs("alice", "a", at_once - bound, 0), 0);
  // Anything more is over.
  EXPECT_EQ(fetch.RecordAndGetThrottleTimeMs("alice", "a", 1, 0), 1);
  // Idle for the whole window: as much again, and no more.
  EXPECT_EQ(fetch.RecordAndGetThrottleTimeMs("alice", "a", at_once, 10 * 1000 + 1), 0);
  EXPECT_GT(fetch.RecordAndGetThrottleTimeMs("alice", "a", 1, 10 * 1000 + 1), 0);
  // One more than that is throttled even for a new client; the bound is not.
  fetch.UpdateConfigs({{User(std::nullopt), {.consumer_byte_rate = 1000}}});
  EXPECT_GT(fetch.RecordAndGetThrottleTimeMs("carol", "a", at_once + 1, 0), 0);
  EXPECT_EQ(fetch.RecordAndGetThrottleTimeMs("dave", "a", bound, 0), 0);
}

// A throttled fetch is answered empty and its bytes taken back (Kafka's
// unrecord): the consumer, back after its throttle, gets exactly the bytes
// the throttle made room for.
TEST(ClientQuotaManagerTest, AnUnrecordedFetchLeavesItsRoomForTheNextOne) {
  ClientQuotaManager fetch(QuotaType::kFetch);
  fetch.UpdateConfigs({{User("alice"), {.consumer_byte_rate = kMB}}});
  EXPECT_EQ(fetch.RecordAndGetThrottleTimeMs("alice", "a", 10 * kMB, 0), 0);
  const int64_t throttle = fetch.RecordAndGetThrottleTimeMs("alice", "a", 3 * kMB, 0);
  EXPECT_EQ(throttle, 2000);  // 1 MB of credit left, 2 MB over
  fetch.Unrecord("alice", "a", 3 * kMB, 0);
  EXPECT_EQ(fetch.RecordAndGetThrottleTimeMs("alice", "a", 3 * kMB, throttle), 0);
  EXPECT_GT(fetch.RecordAndGetThrottleTimeMs("alice", "a", 1, throttle), 0);
}

// Request time is a sampled rate, not a bucket: Kafka's (samples - 1)
// windows, the shortest span the rate is taken over.
TEST(ClientQuotaManagerTest, TheRequestWindowBoundIsKafkas) {
  ClientQuotaManager request(QuotaType::kRequest);
  request.UpdateConfigs({{User("alice"), {.request_percentage = 10}}});
  EXPECT_DOUBLE_EQ(request.MaxValueInQuotaWindow("alice", "a"), 10 * 10 * 1.0);
}

// request_percentage is percent of one thread: 10 % is 100 ms of thread time
// per second. 1050 ms recorded at once is 105 percent-seconds over the 10 s
// minimum window: 10.5 %, so (10.5 - 10) / 10 * 10000 = 500 ms.
TEST(ClientQuotaManagerTest, RequestTimeIsRecordedAsPercentOfAThread) {
  ClientQuotaManager request(QuotaType::kRequest);
  request.UpdateConfigs({{User("alice"), {.request_percentage = 10}}});
  EXPECT_EQ(request.RecordAndGetThrottleTimeMs("alice", "app", 1000, 0), 0);  // 10 %
  EXPECT_EQ(request.RecordAndGetThrottleTimeMs("alice", "app", 50, 0), 500);
  // Further over: capped at one window (ClientRequestQuotaManager).
  EXPECT_EQ(request.max_throttle_ms(), 1000);
  EXPECT_EQ(request.RecordAndGetThrottleTimeMs("alice", "app", 1000, 0), 1000);
}

TEST(ClientQuotaManagerTest, ConfigUpdatesKeepTheSensorsHistory) {
  ClientQuotaManager produce(QuotaType::kProduce);
  produce.UpdateConfigs({{User("alice"), {.producer_byte_rate = kMB}}});
  // 9 of the 11 MB of a new client's credit.
  EXPECT_EQ(produce.RecordAndGetThrottleTimeMs("alice", "app", 9 * kMB, 0), 0);
  produce.UpdateConfigs({{User("alice"), {.producer_byte_rate = kMB / 2}}});
  EXPECT_EQ(produce.Bound("alice", "app"), kMB / 2);
  // The 9 MB still count: 2 MB of credit left, so 3 MB more are 1 MB over
  // (2 s at 0.5 MB/s); a fresh bucket would hold 5.5 MB.
  EXPECT_EQ(produce.RecordAndGetThrottleTimeMs("alice", "app", 3 * kMB, 0), 2000);
  EXPECT_EQ(produce.sensor_count(), 1u);
  // Removing the quota leaves the sensor unbounded until it expires.
  produce.UpdateConfigs({{User("bob"), {.producer_byte_rate = kMB}}});
  EXPECT_EQ(produce.RecordAndGetThrottleTimeMs("alice", "app", kMB, 0), 0);
}

TEST(ClientQuotaManagerTest, IdleSensorsExpireAfterAnHour) {
  ClientQuotaManager produce(QuotaType::kProduce);
  produce.UpdateConfigs({{User("alice"), {.producer_byte_rate = kMB}}});
  EXPECT_EQ(produce.RecordAndGetThrottleTimeMs("alice", "app", 12 * kMB, 0), 1000);
  EXPECT_EQ(produce.RecordAndGetThrottleTimeMs("bob", "app", 1, 1000), 0);
  produce.ExpireIdleSensors(ClientQuotaManager::kInactiveSensorExpirationMs);
  EXPECT_EQ(produce.sensor_count(), 2u);  // exactly an hour is not more than one
  produce.ExpireIdleSensors(ClientQuotaManager::kInactiveSensorExpirationMs + 1);
  EXPECT_EQ(produce.sensor_count(), 1u);  // alice's went, bob's recorded later
  produce.ExpireIdleSensors(ClientQuotaManager::kInactiveSensorExpirationMs + 1001);
  EXPECT_EQ(produce.sensor_count(), 0u);
}

}  // namespace
}  // namespace strata::broker
