#pragma once
// Error codes of the transaction APIs as an older client version knows them.
#include <cstdint>

#include "protocol/error_code.h"

namespace strata::kafka {

// PRODUCER_FENCED is new in AddPartitionsToTxn, AddOffsetsToTxn and EndTxn
// v2 (InitProducerId v4): older clients are told INVALID_PRODUCER_EPOCH, as
// Kafka tells them.
inline protocol::ErrorCode TxnErrorForVersion(protocol::ErrorCode code, int16_t version,
                                              int16_t first_fenced_version = 2) {
  if (code == protocol::ErrorCode::kProducerFenced && version < first_fenced_version)
    return protocol::ErrorCode::kInvalidProducerEpoch;
  return code;
}

}  // namespace strata::kafka
