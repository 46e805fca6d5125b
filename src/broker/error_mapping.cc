#include "broker/error_mapping.h"

namespace strata::broker {

using protocol::ErrorCode;

ErrorCode ProduceErrorCode(Errc errc) {
  switch (errc) {
    case Errc::kOk:
      return ErrorCode::kNone;
    case Errc::kCorrupt:
      return ErrorCode::kCorruptMessage;
    case Errc::kTooLarge:
      return ErrorCode::kMessageTooLarge;
    case Errc::kInvalidArgument:
      return ErrorCode::kInvalidRecord;
    case Errc::kUnsupported:
      return ErrorCode::kUnsupportedForMessageFormat;
    case Errc::kOutOfOrderSequence:
      return ErrorCode::kOutOfOrderSequenceNumber;
    case Errc::kDuplicateSequence:
      return ErrorCode::kDuplicateSequenceNumber;
    case Errc::kInvalidProducerEpoch:
      return ErrorCode::kInvalidProducerEpoch;
    case Errc::kUnknownProducerId:
      return ErrorCode::kUnknownProducerId;
    case Errc::kIoError:
      return ErrorCode::kKafkaStorageError;
    case Errc::kNotFound:
      return ErrorCode::kUnknownTopicOrPartition;
    default:
      return ErrorCode::kRequestTimedOut;
  }
}

ErrorCode TopicWriteErrorCode(Errc errc) {
  switch (errc) {
    case Errc::kOk:
      return ErrorCode::kNone;
    case Errc::kNotFound:
      return ErrorCode::kUnknownTopicOrPartition;
    case Errc::kAlreadyExists:
      return ErrorCode::kTopicAlreadyExists;
    case Errc::kInvalidArgument:
      return ErrorCode::kInvalidRequest;
    case Errc::kUnavailable:
    case Errc::kTimeout:
      return ErrorCode::kRequestTimedOut;
    case Errc::kFenced:
      return ErrorCode::kNotController;
    default:
      return ErrorCode::kKafkaStorageError;
  }
}

ErrorCode GenericErrorCode(Errc errc) {
  switch (errc) {
    case Errc::kOk:
      return ErrorCode::kNone;
    case Errc::kOutOfRange:
      return ErrorCode::kOffsetOutOfRange;
    case Errc::kNotFound:
      return ErrorCode::kUnknownTopicOrPartition;
    case Errc::kAlreadyExists:
      return ErrorCode::kTopicAlreadyExists;
    case Errc::kInvalidArgument:
      return ErrorCode::kInvalidRequest;
    case Errc::kIoError:
      return ErrorCode::kKafkaStorageError;
    case Errc::kCorrupt:
      return ErrorCode::kCorruptMessage;
    case Errc::kTimeout:
      return ErrorCode::kRequestTimedOut;
    case Errc::kUnavailable:
      return ErrorCode::kLeaderNotAvailable;
    case Errc::kFenced:
      return ErrorCode::kNotController;
    default:
      return ErrorCode::kUnknownServerError;
  }
}

}  // namespace strata::broker
