#include "kafka/fetch_session.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace strata::kafka {
namespace {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;
using Kind = FetchSessionContext::Kind;

using Names = std::vector<std::pair<std::string, int32_t>>;

FetchRequest Request(int32_t id, int32_t epoch, const Names& partitions, int64_t offset = 0) {
  FetchRequest req;
  req.session_id = id;
  req.session_epoch = epoch;
  for (const auto& [topic, p] : partitions) {
    if (req.topics.empty() || req.topics.back().topic != topic) req.topics.push_back({topic, {}});
    FetchRequest::Partition part;
    part.partition = p;
    part.fetch_offset = offset;
    part.partition_max_bytes = 1 << 20;
    req.topics.back().partitions.push_back(part);
  }
  return req;
}

Names NamesOf(const FetchRequest& req) {
  Names out;
  for (const auto& t : req.topics) {
    for (const auto& p : t.partitions) out.emplace_back(t.topic, p.partition);
  }
  return out;
}

Names NamesOf(const FetchResponse& resp) {
  Names out;
  for (const auto& t : resp.responses) {
    for (const auto& p : t.partitions) out.emplace_back(t.topic, p.partition_index);
  }
  return out;
}

// The answer a read of `req` would give: every partition, high watermark
// `hw`, records only for those in `with_records`.
FetchResponse Answer(const FetchRequest& req, int64_t hw, const Names& with_records = {}) {
  static const uint8_t kBytes[16] = {};
  FetchResponse resp;
  for (const auto& t : req.topics) {
    auto& out = resp.responses.emplace_back();
    out.topic = t.topic;
    for (const auto& p : t.partitions) {
      auto& part = out.partitions.emplace_back();
      part.partition_index = p.partition;
      part.high_watermark = hw;
      part.log_start_offset = 0;
      for (const auto& name : with_records) {
        if (name == std::pair(t.topic, p.partition)) {
          part.records.Send(FileRegion::Memory(kBytes, sizeof(kBytes), nullptr));
        }
      }
    }
  }
  return resp;
}

// Opens a session of `partitions`; returns its id.
int32_t Open(FetchSessionCache& cache, const Names& partitions, bool privileged = false,
             int64_t now = 0) {
  FetchRequest req = Request(0, 0, partitions);
  FetchSessionContext c = cache.Begin(req, privileged, now);
  EXPECT_EQ(c.kind, Kind::kFull);
  FetchResponse resp = Answer(req, 10);
  cache.Finish(c, req, resp, false, now);
  EXPECT_EQ(NamesOf(resp), partitions) << "a full answer holds every partition";
  return resp.session_id;
}

const Names kThree = {{"a", 0}, {"a", 1}, {"b", 0}};

TEST(FetchSessionTest, IncrementalFetchesReadTheSessionAndAnswerOnlyWhatChanged) {
  FetchSessionCache cache(10);
  const int32_t id = Open(cache, kThree);
  ASSERT_NE(id, 0);

  // Nothing named: all three are read; only the one with records is answered.
  FetchRequest req = Request(id, 1, {});
  FetchSessionContext c = cache.Begin(req, false, 1);
  ASSERT_EQ(c.kind, Kind::kIncremental);
  EXPECT_EQ(NamesOf(req), kThree);
  FetchResponse resp = Answer(req, 10, {{"a", 1}});
  cache.Finish(c, req, resp, false, 1);
  EXPECT_EQ(resp.session_id, id);
  EXPECT_EQ(NamesOf(resp), (Names{{"a", 1}}));

  // The partition sent with records went to the end of the order; a high
  // watermark that moved is news too.
  req = Request(id, 2, {{"a", 1}}, /*offset=*/5);
  c = cache.Begin(req, false, 2);
  EXPECT_EQ(NamesOf(req), (Names{{"a", 0}, {"b", 0}, {"a", 1}}));
  EXPECT_EQ(req.topics[2].partitions[0].fetch_offset, 5) << "the named partition was updated";
  resp = Answer(req, 10);
  resp.responses[1].partitions[0].high_watermark = 11;  // b-0
  cache.Finish(c, req, resp, false, 2);
  EXPECT_EQ(NamesOf(resp), (Names{{"b", 0}}));

  // Unchanged: an empty answer, still in the session.
  req = Request(id, 3, {});
  c = cache.Begin(req, false, 3);
  resp = Answer(req, 10);
  resp.responses[1].partitions[0].high_watermark = 11;
  cache.Finish(c, req, resp, false, 3);
  EXPECT_TRUE(NamesOf(resp).empty());
  EXPECT_EQ(resp.session_id, id);
  EXPECT_EQ(cache.counters().incremental, 3u);
  EXPECT_EQ(cache.counters().partitions, 3u);
}

TEST(FetchSessionTest, AnErrorIsAlwaysSentAndItsPartitionAgainOnceItClears) {
  FetchSessionCache cache(10);
  const int32_t id = Open(cache, kThree);
  FetchRequest req = Request(id, 1, {});
  FetchSessionContext c = cache.Begin(req, false, 1);
  FetchResponse resp = Answer(req, 10);
  resp.responses[0].partitions[0].error_code = protocol::Code(ErrorCode::kNotLeaderOrFollower);
  cache.Finish(c, req, resp, false, 1);
  EXPECT_EQ(NamesOf(resp), (Names{{"a", 0}}));
  req = Request(id, 2, {});
  c = cache.Begin(req, false, 2);
  resp = Answer(req, 10);  // the same high watermark as before the error
  cache.Finish(c, req, resp, false, 2);
  EXPECT_EQ(NamesOf(resp), (Names{{"a", 0}}));
}

TEST(FetchSessionTest, WrongEpochsAndUnknownSessionsAreRefusedAndEpochMinusOneCloses) {
  FetchSessionCache cache(10);
  const int32_t id = Open(cache, kThree);
  FetchRequest req = Request(id, 2, {});
  FetchSessionContext c = cache.Begin(req, false, 1);
  EXPECT_EQ(c.error, ErrorCode::kInvalidFetchSessionEpoch);
  FetchResponse resp = Answer(Request(0, 0, kThree), 1);
  cache.Finish(c, req, resp, false, 1);
  EXPECT_EQ(resp.error_code, protocol::Code(ErrorCode::kInvalidFetchSessionEpoch));
  EXPECT_EQ(resp.session_id, 0);
  EXPECT_TRUE(resp.responses.empty());

  req = Request(id + 1, 1, {});
  EXPECT_EQ(cache.Begin(req, false, 1).error, ErrorCode::kFetchSessionIdNotFound);
  req = Request(0, 1, {});
  EXPECT_EQ(cache.Begin(req, false, 1).error, ErrorCode::kFetchSessionIdNotFound);

  // The right epoch still works after refusals; then -1 closes the session.
  req = Request(id, 1, {});
  EXPECT_EQ(cache.Begin(req, false, 1).kind, Kind::kIncremental);
  req = Request(id, -1, kThree);
  c = cache.Begin(req, false, 2);
  EXPECT_EQ(c.kind, Kind::kSessionless);
  resp = Answer(req, 10);
  cache.Finish(c, req, resp, false, 2);
  EXPECT_EQ(resp.session_id, 0);
  EXPECT_EQ(NamesOf(resp), kThree);
  req = Request(id, 2, {});
  EXPECT_EQ(cache.Begin(req, false, 3).error, ErrorCode::kFetchSessionIdNotFound);
  EXPECT_EQ(cache.counters().sessions, 0u);
  EXPECT_EQ(cache.counters().errors, 4u);
}

TEST(FetchSessionTest, AFullFetchNamingASessionReplacesIt) {
  FetchSessionCache cache(10);
  const int32_t first = Open(cache, kThree);
  FetchRequest req = Request(first, 0, {{"c", 0}});
  FetchSessionContext c = cache.Begin(req, false, 1);
  FetchResponse resp = Answer(req, 1);
  cache.Finish(c, req, resp, false, 1);
  EXPECT_NE(resp.session_id, 0);
  EXPECT_NE(resp.session_id, first);
  EXPECT_EQ(cache.counters().sessions, 1u);
  req = Request(first, 1, {});
  EXPECT_EQ(cache.Begin(req, false, 1).error, ErrorCode::kFetchSessionIdNotFound);
}

TEST(FetchSessionTest, ForgottenPartitionsLeaveAndAnEmptiedSessionCloses) {
  FetchSessionCache cache(10);
  const int32_t id = Open(cache, kThree);
  FetchRequest req = Request(id, 1, {{"c", 0}});
  req.forgotten_topics_data.push_back({"a", {0, 1}});
  FetchSessionContext c = cache.Begin(req, false, 1);
  EXPECT_EQ(NamesOf(req), (Names{{"b", 0}, {"c", 0}}));
  FetchResponse resp = Answer(req, 10);
  cache.Finish(c, req, resp, false, 1);
  EXPECT_EQ(NamesOf(resp), (Names{{"c", 0}})) << "a new partition is news";

  req = Request(id, 2, {});
  req.forgotten_topics_data.push_back({"b", {0}});
  req.forgotten_topics_data.push_back({"c", {0}});
  c = cache.Begin(req, false, 2);
  EXPECT_EQ(c.kind, Kind::kSessionless);
  EXPECT_TRUE(req.topics.empty());
  resp = FetchResponse{};
  cache.Finish(c, req, resp, false, 2);
  EXPECT_EQ(resp.session_id, 0);
  EXPECT_EQ(cache.counters().sessions, 0u);
}

TEST(FetchSessionTest, ThrottledAnswersOpenNothingAndSendNothing) {
  FetchSessionCache cache(10);
  FetchRequest req = Request(0, 0, kThree);
  FetchSessionContext c = cache.Begin(req, false, 0);
  FetchResponse resp;
  resp.throttle_time_ms = 100;
  cache.Finish(c, req, resp, /*throttled=*/true, 0);
  EXPECT_EQ(resp.session_id, 0);
  EXPECT_EQ(cache.counters().sessions, 0u);

  const int32_t id = Open(cache, kThree);
  req = Request(id, 1, {});
  c = cache.Begin(req, false, 1);
  resp = FetchResponse{};
  cache.Finish(c, req, resp, true, 1);
  EXPECT_EQ(resp.session_id, id);
  // The epoch was used; nothing was remembered as sent.
  req = Request(id, 2, {});
  c = cache.Begin(req, false, 2);
  ASSERT_EQ(c.kind, Kind::kIncremental);
  resp = Answer(req, 12);
  cache.Finish(c, req, resp, false, 2);
  EXPECT_EQ(NamesOf(resp), kThree);
}

TEST(FetchSessionTest, AFetchOvertakenByTheNextEpochIsRefused) {
  FetchSessionCache cache(10);
  const int32_t id = Open(cache, kThree);
  FetchRequest slow = Request(id, 1, {});
  FetchSessionContext slow_context = cache.Begin(slow, false, 1);
  FetchRequest next = Request(id, 2, {});
  ASSERT_EQ(cache.Begin(next, false, 2).kind, Kind::kIncremental);
  FetchResponse resp = Answer(slow, 10, {{"a", 0}});
  cache.Finish(slow_context, slow, resp, false, 3);
  EXPECT_EQ(resp.error_code, protocol::Code(ErrorCode::kInvalidFetchSessionEpoch));
  EXPECT_EQ(resp.session_id, id);
  EXPECT_TRUE(resp.responses.empty());
}

TEST(FetchSessionTest, EvictionFollowsKafkasRules) {
  const int64_t old = FetchSessionCache::kEvictionMs + 1;
  FetchSessionCache cache(2);
  const int32_t small = Open(cache, {{"a", 0}}, false, 0);
  const int32_t big = Open(cache, kThree, false, 0);
  ASSERT_NE(small, 0);
  ASSERT_NE(big, 0);
  // Full, and both consumers' sessions young: a consumer gets none.
  EXPECT_EQ(Open(cache, kThree, false, 1), 0);
  // A follower's may take the least valuable consumer session.
  const int32_t follower = Open(cache, {{"x", 0}}, true, 2);
  EXPECT_NE(follower, 0);
  EXPECT_EQ(cache.counters().evictions, 1u);
  FetchRequest req = Request(small, 1, {});
  EXPECT_EQ(cache.Begin(req, false, 3).error, ErrorCode::kFetchSessionIdNotFound);
  // Another follower's takes the other consumer session, however large.
  EXPECT_NE(Open(cache, {{"y", 0}}, true, 4), 0);
  EXPECT_EQ(cache.counters().evictions, 2u);
  // Followers' sessions younger than two minutes: neither a follower nor a
  // consumer gets one now.
  EXPECT_EQ(Open(cache, {{"w", 0}, {"w", 1}}, true, 5), 0);
  EXPECT_EQ(Open(cache, {{"v", 0}}, false, 5), 0);
  // Two minutes idle: any session goes for any new one.
  EXPECT_NE(Open(cache, {{"z", 0}}, false, 5 + old), 0);
  EXPECT_EQ(cache.counters().evictions, 3u);
  EXPECT_EQ(cache.counters().sessions, 2u);
}

TEST(FetchSessionTest, NoSlotsMeansNoSessions) {
  FetchSessionCache cache(0);
  EXPECT_EQ(Open(cache, kThree), 0);
  EXPECT_EQ(cache.counters().sessions, 0u);
}

}  // namespace
}  // namespace strata::kafka
