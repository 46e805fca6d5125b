#include "kafka/error_mapping.h"

#include <gtest/gtest.h>

namespace strata::kafka {
namespace {

using protocol::ErrorCode;

TEST(ErrorMapping, SuccessIsNoneInEveryFamily) {
  EXPECT_EQ(ProduceErrorCode(Errc::kOk), ErrorCode::kNone);
  EXPECT_EQ(TopicWriteErrorCode(Errc::kOk), ErrorCode::kNone);
  EXPECT_EQ(GenericErrorCode(Errc::kOk), ErrorCode::kNone);
}

// A produce whose outcome is unknown must stay retriable: the record may be
// written, and the idempotent producer's retry is what dedups it.
TEST(ErrorMapping, ProduceUnknownOutcomesAreRetriable) {
  EXPECT_EQ(ProduceErrorCode(Errc::kTimeout), ErrorCode::kRequestTimedOut);
  EXPECT_EQ(ProduceErrorCode(Errc::kUnavailable), ErrorCode::kRequestTimedOut);
  EXPECT_EQ(ProduceErrorCode(Errc::kShuttingDown), ErrorCode::kRequestTimedOut);
  EXPECT_EQ(ProduceErrorCode(Errc::kDuplicateSequence), ErrorCode::kDuplicateSequenceNumber);
  EXPECT_EQ(ProduceErrorCode(Errc::kIoError), ErrorCode::kKafkaStorageError);
  EXPECT_EQ(ProduceErrorCode(Errc::kFenced), ErrorCode::kNotLeaderOrFollower);
}

TEST(ErrorMapping, TopicWritesNameTheControllerAndTheStore) {
  EXPECT_EQ(TopicWriteErrorCode(Errc::kFenced), ErrorCode::kNotController);
  EXPECT_EQ(TopicWriteErrorCode(Errc::kUnavailable), ErrorCode::kRequestTimedOut);
  EXPECT_EQ(TopicWriteErrorCode(Errc::kAlreadyExists), ErrorCode::kTopicAlreadyExists);
  EXPECT_EQ(TopicWriteErrorCode(Errc::kCorrupt), ErrorCode::kKafkaStorageError);
}

TEST(ErrorMapping, GenericFallsBackToUnknownServerError) {
  EXPECT_EQ(GenericErrorCode(Errc::kOutOfRange), ErrorCode::kOffsetOutOfRange);
  EXPECT_EQ(GenericErrorCode(Errc::kUnavailable), ErrorCode::kLeaderNotAvailable);
  EXPECT_EQ(GenericErrorCode(Errc::kShuttingDown), ErrorCode::kUnknownServerError);
}

}  // namespace
}  // namespace strata::kafka
