#pragma once
// Walk over the records of a v2 batch (decompressing when needed), reading
// each record's offset and timestamp, for record-level answers to ListOffsets
// by timestamp and by max timestamp, as Kafka gives.
//
// Thread-safety: pure function.
#include <cstdint>
#include <functional>

#include "base/bytes.h"
#include "base/offset.h"
#include "base/result.h"
#include "protocol/record_batch.h"

namespace strata::storage {

// Calls visit(offset, timestamp) for each record of `batch` (the whole batch,
// header included) until it returns false. For LogAppendTime batches every
// record carries the batch max timestamp, as in Kafka. kCorrupt when the
// records are malformed.
Status ForEachRecordTimestamp(ByteView batch, const protocol::BatchHeader& header,
                              const std::function<bool(Offset, int64_t)>& visit);

}  // namespace strata::storage
