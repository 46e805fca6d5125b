#pragma once
// Control records: the end-transaction markers (COMMIT, ABORT) a transaction
// coordinator has written into each partition of a transaction, in Kafka's
// format. A marker is a batch of its own with the transactional and control
// attributes set, the producer id and epoch of the transaction, base
// sequence -1 and one record whose
//   key   = int16 version (0) | int16 type (0 ABORT, 1 COMMIT)
//   value = int16 version (0) | int32 coordinator epoch
// Readers accept higher key and value versions (their leading fields are
// the same) and treat other types (Kafka's KRaft types 2-6, unknown ones) as
// not a transaction marker. Clients never write control batches
// (ValidateProducedBatch refuses them); only the partition leader does, for
// the coordinator.
#include <cstdint>
#include <optional>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/record_batch.h"

namespace strata::protocol {

enum class ControlType : int16_t { kAbort = 0, kCommit = 1 };

// An end-transaction marker.
struct TxnMarker {
  ControlType type = ControlType::kAbort;
  int32_t coordinator_epoch = 0;
  bool operator==(const TxnMarker&) const = default;
};

// The marker batch for producer (`producer_id`, `producer_epoch`) at base
// offset 0 and partition leader epoch -1 (the log stamps both), timestamped
// `timestamp_ms`.
Bytes BuildTxnMarkerBatch(int64_t producer_id, int16_t producer_epoch, const TxnMarker& marker,
                          int64_t timestamp_ms);

// The marker a control batch carries: nullopt when `header` is not a control
// batch, has no record (compaction emptied it) or its record is of another
// control type; kCorrupt when the batch or
// its record is malformed. `batch` starts with the batch `header` describes.
Result<std::optional<TxnMarker>> ParseTxnMarker(const BatchHeader& header, ByteView batch);

}  // namespace strata::protocol
