#include "kafka/record_checks.h"

#include <gtest/gtest.h>

#include "protocol/batch_builder.h"

namespace strata::kafka {
namespace {

using protocol::BatchBuilder;
using protocol::ErrorCode;

constexpr int64_t kNow = 1'800'000'000'000;
const TopicPartition kTp{"t", 0};

Result<RecordRejection> Check(const Bytes& batch, const storage::LogConfig& config) {
  auto h = protocol::ParseBatchHeader(batch);
  EXPECT_TRUE(h.ok());
  return CheckRecords(*h, batch, config, kTp, kNow, 1 << 20);
}

TEST(RecordChecksTest, KeylessRecordsOfACompactedTopicAreNamed) {
  BatchBuilder b;
  b.set_compression(protocol::Compression::kLz4);
  for (int i = 0; i < 100; ++i) {
    b.Add(i % 10 == 0 ? std::nullopt : std::optional<std::string_view>("k"), "v", kNow);
  }
  storage::LogConfig compacted;
  compacted.compacted = true;
  auto r = Check(b.Build(), compacted);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->code, ErrorCode::kInvalidRecord);
  ASSERT_EQ(r->errors.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(r->errors[size_t(i)].batch_index, i * 10);
  EXPECT_EQ(*r->errors[0].message,
            "Compacted topic cannot accept message without key in topic partition t-0.");
  EXPECT_NE(r->message.find("due to 10 record errors in total"), std::string::npos) << r->message;
  EXPECT_NE(r->message.find("RecordError(batchIndex=20"), std::string::npos) << r->message;
  EXPECT_EQ(r->message.find("batchIndex=30"), std::string::npos) << "three at most";

  auto plain = Check(b.Build(), storage::LogConfig{});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->code, ErrorCode::kNone);
}

TEST(RecordChecksTest, TimestampsOutsideTheWindowAreNamed) {
  storage::LogConfig config;
  config.message_timestamp_before_max_ms = 60'000;
  config.message_timestamp_after_max_ms = 1'000;
  BatchBuilder b;
  b.Add("k", "in", kNow - 59'000);
  b.Add("k", "too old", kNow - 61'000);
  b.Add("k", "in", kNow + 1'000);
  b.Add("k", "future", kNow + 2'000);
  auto r = Check(b.Build(), config);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->code, ErrorCode::kInvalidTimestamp);
  ASSERT_EQ(r->errors.size(), 2u);
  EXPECT_EQ(r->errors[0].batch_index, 1);
  EXPECT_EQ(r->errors[1].batch_index, 3);
  EXPECT_EQ(*r->errors[1].message,
            fmt::format("Timestamp {} of message with offset 3 is out of range. The timestamp "
                        "should be within [{}, {}]",
                        kNow + 2'000, kNow - 60'000, kNow + 1'000));

  config.message_timestamp_log_append = true;  // the broker's time replaces them
  auto append_time = Check(b.Build(), config);
  ASSERT_TRUE(append_time.ok());
  EXPECT_EQ(append_time->code, ErrorCode::kNone);

  // Defaults: anything in the past, up to an hour ahead.
  BatchBuilder old;
  old.Add("k", "v", 0).Add("k", "v", kNow + 3'600'000);
  auto defaults = Check(old.Build(), storage::LogConfig{});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->code, ErrorCode::kNone);
}

}  // namespace
}  // namespace strata::kafka
