#include "replication/fetch_session_client.h"

#include <gtest/gtest.h>

#include "protocol/error_code.h"

namespace strata::replication {
namespace {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;

FetchRequest::Partition At(int32_t partition, int64_t offset) {
  FetchRequest::Partition p;
  p.partition = partition;
  p.fetch_offset = offset;
  p.partition_max_bytes = 1 << 20;
  return p;
}

std::vector<FetchRequest::Topic> Wanted(int64_t a0, int64_t a1, int64_t b0) {
  return {{"a", {At(0, a0), At(1, a1)}}, {"b", {At(0, b0)}}};
}

FetchResponse Answer(int32_t session_id, int16_t error = 0) {
  FetchResponse r;
  r.session_id = session_id;
  r.error_code = error;
  return r;
}

size_t Count(const FetchRequest& req) {
  size_t n = 0;
  for (const auto& t : req.topics) n += t.partitions.size();
  return n;
}

TEST(FetchSessionClientTest, FullThenOnlyWhatChangedThenForgotten) {
  FetchSessionClient c;
  FetchRequest req;
  c.Build(Wanted(0, 0, 0), req);
  EXPECT_EQ(req.session_id, 0);
  EXPECT_EQ(req.session_epoch, 0);
  EXPECT_EQ(Count(req), 3u);
  EXPECT_FALSE(c.last_was_incremental());
  c.OnResponse(Answer(77));

  c.Build(Wanted(5, 0, 0), req);
  EXPECT_TRUE(c.last_was_incremental());
  EXPECT_EQ(req.session_id, 77);
  EXPECT_EQ(req.session_epoch, 1);
  ASSERT_EQ(Count(req), 1u);
  EXPECT_EQ(req.topics[0].topic, "a");
  EXPECT_EQ(req.topics[0].partitions[0].fetch_offset, 5);
  c.OnResponse(Answer(77));

  // b-0 no longer wanted: forgotten; nothing else changed.
  c.Build({{"a", {At(0, 5), At(1, 0)}}}, req);
  EXPECT_EQ(req.session_epoch, 2);
  EXPECT_EQ(Count(req), 0u);
  ASSERT_EQ(req.forgotten_topics_data.size(), 1u);
  EXPECT_EQ(req.forgotten_topics_data[0].topic, "b");
  EXPECT_EQ(req.forgotten_topics_data[0].partitions, std::vector<int32_t>{0});
  c.OnResponse(Answer(77));

  // Wanted again: it is new to the session.
  c.Build(Wanted(5, 0, 3), req);
  EXPECT_EQ(req.session_epoch, 3);
  ASSERT_EQ(Count(req), 1u);
  EXPECT_EQ(req.topics[0].topic, "b");
  EXPECT_TRUE(req.forgotten_topics_data.empty());
}

TEST(FetchSessionClientTest, FailuresAndErrorsGoBackToFullFetches) {
  FetchSessionClient c;
  FetchRequest req;
  c.Build(Wanted(0, 0, 0), req);
  c.OnResponse(Answer(9));
  c.Build(Wanted(1, 0, 0), req);
  c.OnFailure();  // no answer: the session may not have the change
  c.Build(Wanted(1, 0, 0), req);
  EXPECT_EQ(req.session_id, 9);
  EXPECT_EQ(req.session_epoch, 0);
  EXPECT_EQ(Count(req), 3u);
  c.OnResponse(Answer(10));  // a new session replaces it
  c.Build(Wanted(1, 0, 0), req);
  EXPECT_EQ(req.session_id, 10);
  EXPECT_EQ(req.session_epoch, 1);
  EXPECT_EQ(Count(req), 0u);

  c.OnResponse(Answer(0, protocol::Code(ErrorCode::kInvalidFetchSessionEpoch)));
  c.Build(Wanted(1, 0, 0), req);
  EXPECT_EQ(req.session_id, 10);
  EXPECT_EQ(req.session_epoch, 0);
  EXPECT_EQ(Count(req), 3u);
  c.OnResponse(Answer(10));

  c.Build(Wanted(1, 0, 0), req);
  c.OnResponse(Answer(0, protocol::Code(ErrorCode::kFetchSessionIdNotFound)));
  c.Build(Wanted(1, 0, 0), req);
  EXPECT_EQ(req.session_id, 0);
  EXPECT_EQ(req.session_epoch, 0);
  EXPECT_EQ(Count(req), 3u);

  // A leader without sessions: full fetches every time.
  c.OnResponse(Answer(0));
  c.Build(Wanted(2, 0, 0), req);
  EXPECT_EQ(req.session_id, 0);
  EXPECT_EQ(req.session_epoch, 0);
  EXPECT_EQ(Count(req), 3u);
}

}  // namespace
}  // namespace strata::replication
