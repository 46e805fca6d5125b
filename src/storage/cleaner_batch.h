#pragma once
// Record-level filtering of one v2 batch for log compaction (Kafka's
// MemoryRecords.filterTo with the cleaner's filter). A batch whose records
// all survive is kept byte for byte; otherwise the survivors are re-encoded
// into a batch with the same base offset, last offset delta (offset gaps are
// fine), producer id/epoch/base sequence, leader epoch, timestamp type,
// transactional flag and codec (recompressed), and a fresh CRC.
//
// Tombstones follow KIP-534: a batch that keeps a tombstone and has no
// delete horizon yet is rewritten with the delete-horizon attribute (0x40)
// and baseTimestamp = the horizon (record timestamp deltas are rebased so
// every record keeps its timestamp). Later passes drop its tombstones once
// the horizon has passed.
//
// Thread-safety: pure functions.
#include <cstdint>
#include <functional>
#include <optional>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/record_batch.h"
#include "protocol/records.h"

namespace strata::storage {

// Batch attribute bit 6: baseTimestamp holds the delete horizon.
inline constexpr int16_t kDeleteHorizonFlag = 0x40;

// The batch's delete horizon (ms), if the cleaner has set one.
inline std::optional<int64_t> DeleteHorizon(const protocol::BatchHeader& h) {
  if ((h.attributes & kDeleteHorizonFlag) == 0) return std::nullopt;
  return h.base_timestamp;
}

enum class BatchOutcome {
  kDropped,    // nothing of the batch remains
  kOriginal,   // kept unchanged (write the input bytes)
  kRewritten,  // FilteredBatch::bytes replaces it
};

struct BatchFilterOptions {
  // Keep an empty batch (header only, no records) when no record survives:
  // the producer's last batch (its sequence state) or the last batch of a
  // cleaned segment (its offsets).
  bool retain_empty = false;
  // Horizon stamped on a batch that keeps a tombstone and has none.
  int64_t new_delete_horizon = -1;
  size_t max_decompressed_bytes = 64u << 20;
};

struct FilteredBatch {
  BatchOutcome outcome = BatchOutcome::kDropped;
  Bytes bytes;
  int32_t records_read = 0;
  int32_t records_retained = 0;
  // The delete horizon of a kept batch that still holds a tombstone or a
  // marker waiting for it, or -1.
  int64_t delete_horizon = -1;
};

// Decides whether the record at `offset` survives.
using RecordRetainFn = std::function<bool(Offset offset, const protocol::Record& record)>;

// Filters `batch` (exactly one whole batch described by `h`). Control
// batches are kept as they are without consulting `retain` (the cleaner
// uses FilterControlBatch for them). kCorrupt when
// the records cannot be parsed or decompressed.
Result<FilteredBatch> FilterBatch(ByteView batch, const protocol::BatchHeader& h,
                                  const BatchFilterOptions& options, const RecordRetainFn& retain);

// Filters control batch `batch` (described by `h`). It stays as it is unless
// `discardable` (no batch of its transaction remains, CleanedTxns): then it
// gets a delete horizon (options.new_delete_horizon) if it has none, and once
// `now` has passed the horizon its record goes, the batch dropped or, when
// options.retain_empty, kept empty. An empty control batch is dropped unless
// options.retain_empty.
Result<FilteredBatch> FilterControlBatch(ByteView batch, const protocol::BatchHeader& h,
                                         const BatchFilterOptions& options, int64_t now,
                                         bool discardable);

// A batch with no records covering [h.base_offset, h.last_offset()] and
// carrying h's producer fields (Kafka's DefaultRecordBatch empty header).
Bytes EmptyBatchLike(const protocol::BatchHeader& h);

}  // namespace strata::storage
