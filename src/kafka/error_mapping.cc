#include "kafka/error_mapping.h"

#include <span>

namespace strata::kafka {
namespace {

using protocol::ErrorCode;

// One family's mapping: the listed codes, and what every other one becomes.
struct ErrcRow {
  Errc errc;
  ErrorCode code;
};
struct ErrorFamily {
  std::span<const ErrcRow> rows;
  ErrorCode otherwise;
};

constexpr ErrcRow kProduceRows[] = {
    {Errc::kOk, ErrorCode::kNone},
    {Errc::kCorrupt, ErrorCode::kCorruptMessage},
    {Errc::kTooLarge, ErrorCode::kMessageTooLarge},
    {Errc::kInvalidArgument, ErrorCode::kInvalidRecord},
    {Errc::kUnsupported, ErrorCode::kUnsupportedForMessageFormat},
    {Errc::kOutOfOrderSequence, ErrorCode::kOutOfOrderSequenceNumber},
    {Errc::kDuplicateSequence, ErrorCode::kDuplicateSequenceNumber},
    {Errc::kInvalidProducerEpoch, ErrorCode::kInvalidProducerEpoch},
    {Errc::kUnknownProducerId, ErrorCode::kUnknownProducerId},
    {Errc::kInvalidTxnState, ErrorCode::kInvalidTxnState},
    {Errc::kTxnCoordinatorFenced, ErrorCode::kTransactionCoordinatorFenced},
    {Errc::kIoError, ErrorCode::kKafkaStorageError},
    {Errc::kNotFound, ErrorCode::kUnknownTopicOrPartition},
    // Leadership moved between the lookup and the append: the client
    // refreshes its metadata and retries at the new leader.
    {Errc::kFenced, ErrorCode::kNotLeaderOrFollower},
};
// An outcome the producer cannot know (KAFKA-14034): retriable.
constexpr ErrorFamily kProduce{kProduceRows, ErrorCode::kRequestTimedOut};

constexpr ErrcRow kTopicWriteRows[] = {
    {Errc::kOk, ErrorCode::kNone},
    {Errc::kNotFound, ErrorCode::kUnknownTopicOrPartition},
    {Errc::kAlreadyExists, ErrorCode::kTopicAlreadyExists},
    {Errc::kInvalidArgument, ErrorCode::kInvalidRequest},
    {Errc::kUnavailable, ErrorCode::kRequestTimedOut},
    {Errc::kTimeout, ErrorCode::kRequestTimedOut},
    {Errc::kFenced, ErrorCode::kNotController},
};
constexpr ErrorFamily kTopicWrite{kTopicWriteRows, ErrorCode::kKafkaStorageError};

constexpr ErrcRow kGenericRows[] = {
    {Errc::kOk, ErrorCode::kNone},
    {Errc::kOutOfRange, ErrorCode::kOffsetOutOfRange},
    {Errc::kNotFound, ErrorCode::kUnknownTopicOrPartition},
    {Errc::kAlreadyExists, ErrorCode::kTopicAlreadyExists},
    {Errc::kInvalidArgument, ErrorCode::kInvalidRequest},
    {Errc::kIoError, ErrorCode::kKafkaStorageError},
    {Errc::kCorrupt, ErrorCode::kCorruptMessage},
    {Errc::kTimeout, ErrorCode::kRequestTimedOut},
    {Errc::kUnavailable, ErrorCode::kLeaderNotAvailable},
    {Errc::kFenced, ErrorCode::kNotController},
};
constexpr ErrorFamily kGeneric{kGenericRows, ErrorCode::kUnknownServerError};

ErrorCode Map(const ErrorFamily& family, Errc errc) {
  for (const ErrcRow& row : family.rows) {
    if (row.errc == errc) return row.code;
  }
  return family.otherwise;
}

}  // namespace

ErrorCode ProduceErrorCode(Errc errc) { return Map(kProduce, errc); }
ErrorCode TopicWriteErrorCode(Errc errc) { return Map(kTopicWrite, errc); }
ErrorCode GenericErrorCode(Errc errc) { return Map(kGeneric, errc); }

}  // namespace strata::kafka
