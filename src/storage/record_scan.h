#pragma once
// Minimal walk over the records of an UNCOMPRESSED v2 batch, reading only
// each record's offset and timestamp. ListOffsets by timestamp and by max
// timestamp need record-level answers; compressed batches cannot be walked
// here (no decompression in storage), so callers fall back to batch-level
// answers for them.
//
// Thread-safety: pure function.
#include <cstdint>
#include <functional>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/record_batch.h"

namespace strata::storage {

// Calls visit(offset, timestamp) for each record of `batch` (the whole batch,
// header included) until it returns false. For LogAppendTime batches every
// record carries the batch max timestamp, as in Kafka. kUnsupported for a
// compressed CreateTime batch, kCorrupt when the records are malformed.
Status ForEachRecordTimestamp(ByteView batch, const protocol::BatchHeader& header,
                              const std::function<bool(int64_t, int64_t)>& visit);

}  // namespace strata::storage
