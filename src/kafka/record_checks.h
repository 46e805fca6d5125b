#pragma once
// The per-record checks of a produced batch (Kafka's LogValidator), with the
// refused records named by their index in the batch (KIP-467): a record
// without a key on a compacted topic (INVALID_RECORD), and with CreateTime a
// timestamp further than message.timestamp.before.max.ms in the past or
// message.timestamp.after.max.ms in the future (INVALID_TIMESTAMP). One
// refused record refuses its whole batch; the producer learns which records
// were at fault.
//
// Timestamps are read record by record only when the batch header says some
// may be out of range (its first or largest timestamp is): a well-behaved
// producer's batches are not decompressed for it.
#include <cstdint>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "base/topic_partition.h"
#include "protocol/error_code.h"
#include "protocol/messages/produce.h"
#include "protocol/record_batch.h"
#include "storage/log.h"

namespace strata::kafka {

// What was wrong with a batch's records; code kNone when nothing was.
struct RecordRejection {
  protocol::ErrorCode code = protocol::ErrorCode::kNone;
  std::vector<protocol::ProduceResponse::RecordError> errors;
  std::string message;  // Kafka's summary of the first three
};

// Checks the records of `batch` (whose header is `header`) for a topic with
// `config`, at wall-clock time `now_ms`. An error: the batch could not be
// read (corrupt, or larger than `max_decompressed` once decompressed).
Result<RecordRejection> CheckRecords(const protocol::BatchHeader& header, ByteView batch,
                                     const storage::LogConfig& config, const TopicPartition& tp,
                                     int64_t now_ms, size_t max_decompressed);

}  // namespace strata::kafka
