#include "base/result.h"

namespace strata {

const char* ErrcName(Errc c) {
  switch (c) {
    case Errc::kOk:
      return "ok";
    case Errc::kIoError:
      return "io_error";
    case Errc::kCorrupt:
      return "corrupt";
    case Errc::kInvalidArgument:
      return "invalid_argument";
    case Errc::kNotFound:
      return "not_found";
    case Errc::kAlreadyExists:
      return "already_exists";
    case Errc::kOutOfRange:
      return "out_of_range";
    case Errc::kTooLarge:
      return "too_large";
    case Errc::kUnsupported:
      return "unsupported";
    case Errc::kTimeout:
      return "timeout";
    case Errc::kUnavailable:
      return "unavailable";
    case Errc::kDuplicateSequence:
      return "duplicate_sequence";
    case Errc::kOutOfOrderSequence:
      return "out_of_order_sequence";
    case Errc::kInvalidProducerEpoch:
      return "invalid_producer_epoch";
    case Errc::kUnknownProducerId:
      return "unknown_producer_id";
    case Errc::kShuttingDown:
      return "shutting_down";
    case Errc::kFenced:
      return "fenced";
    case Errc::kInvalidTxnState:
      return "invalid_txn_state";
    case Errc::kTxnCoordinatorFenced:
      return "txn_coordinator_fenced";
  }
  return "unknown";
}

}  // namespace strata
