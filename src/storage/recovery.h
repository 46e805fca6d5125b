#pragma once
// Segment recovery: the batch-by-batch scan run on segments written after the
// last clean shutdown (and on any segment whose indexes fail their sanity
// check). Mirrors Kafka's LogSegment.recover: indexes are rebuilt from
// scratch and the .log is truncated at the first torn or corrupt batch.
//
// Thread-safety: runs during Log::Open only, before the log is shared.
#include <cstdint>
#include <functional>
#include <string>

#include "base/result.h"
#include "protocol/record_batch.h"
#include "storage/segment.h"

namespace strata::storage {

struct SegmentRecovery {
  uint64_t valid_bytes = 0;
  uint64_t truncated_bytes = 0;  // > 0 when a bad tail was cut off
  Offset next_offset;            // one past the last valid batch
};

// Scans `seg` from byte 0. A batch is valid when its header parses, it fits
// in the file, its CRC matches, its base offset is >= `min_offset` and above
// the previous batch's last offset, and its offsets fit the 32-bit relative
// index format. The log is truncated at the first invalid batch with one warn
// line naming `dir_label`, the offset and the byte position. `on_batch` sees
// every valid batch in order. Only I/O failures are returned as errors.
Result<SegmentRecovery> RecoverSegment(
    Segment& seg, Offset min_offset, int32_t index_interval_bytes, const std::string& dir_label,
    const std::function<void(const protocol::BatchHeader&)>& on_batch);

}  // namespace strata::storage
