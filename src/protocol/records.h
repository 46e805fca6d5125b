#pragma once
// Records inside v2 batches: iteration (decompressing when needed) and the
// validation a leader applies to batches a client produced, following the
// rules of Kafka's log validator for magic 2.
//
// Record layout (all lengths zig-zag varints, -1 = null where allowed):
//   length | attributes i8 | timestampDelta varlong | offsetDelta varint |
//   keyLength | key | valueLength | value | headerCount |
//   headers: keyLength (>= 0) | key | valueLength | value
// `length` counts the bytes after itself and must be consumed exactly.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/record_batch.h"

namespace strata::protocol {

// One parsed record. Keys, values and headers are views into the (possibly
// decompressed) records section and live only as long as it does.
struct Record {
  int64_t timestamp_delta = 0;
  int32_t offset_delta = 0;
  std::optional<ByteView> key;
  std::optional<ByteView> value;
  std::vector<std::pair<std::string_view, std::optional<ByteView>>> headers;
};

// Reads consecutive records from an uncompressed records section, checking
// every length against the bytes available. Not thread-safe.
class RecordParser {
 public:
  explicit RecordParser(ByteView records) : data_(records) {}

  // Parses the next record into `out`, reusing its header storage.
  // kCorrupt when the record is truncated or malformed.
  Status Next(Record& out);

  size_t remaining() const { return data_.size() - pos_; }

 private:
  ByteView data_;
  size_t pos_ = 0;
};

// The uncompressed records section of `batch`, which must start with the
// batch described by `header` (extra bytes after it are ignored). Compressed
// sections are decompressed into `scratch` (at most max_decompressed bytes).
Result<ByteView> RecordsSection(const BatchHeader& header, ByteView batch, size_t max_decompressed,
                                Bytes& scratch);

// kCorrupt unless exactly `header.records_count` records were read and no
// bytes remain.
Status CheckRecordsEnd(const BatchHeader& header, const RecordParser& parser);

// Calls visit(const Record&) -> Status for each record of the batch, in
// order, stopping at the first error. Does not check the CRC (callers that
// need it use BatchCrcValid); does check that the batch holds exactly
// records_count well-formed records.
template <typename F>
Status ForEachRecord(const BatchHeader& header, ByteView batch, size_t max_decompressed,
                     F&& visit) {
  Bytes scratch;
  STRATA_ASSIGN_OR_RETURN(ByteView section,
                          RecordsSection(header, batch, max_decompressed, scratch));
  RecordParser parser(section);
  Record record;
  for (int32_t i = 0; i < header.records_count; ++i) {
    STRATA_RETURN_IF_ERROR(parser.Next(record));
    STRATA_RETURN_IF_ERROR(visit(static_cast<const Record&>(record)));
  }
  return CheckRecordsEnd(header, parser);
}

// Limits applied to produced batches.
struct ValidationLimits {
  size_t max_batch_bytes = 1048588;           // topic max.message.bytes (Kafka default)
  size_t max_decompressed_bytes = 64u << 20;  // per batch, bounds zip bombs
};

// A produced batch that passed validation.
struct ValidatedBatch {
  BatchHeader header;
  size_t position = 0;  // byte offset of the batch in the records blob
  size_t size = 0;      // bytes, log overhead included
  // Largest baseTimestamp + timestampDelta over the records, and the offset
  // delta of the first record carrying it.
  int64_t max_timestamp = -1;
  int32_t offset_delta_of_max_timestamp = -1;
};

// Splits a produce request's records blob into batches and validates each
// one completely (records included). Errors, with the Kafka code the broker
// should answer:
//   kUnsupported      magic 0/1 (old message formats)        INVALID_RECORD (produce v3+)
//   kCorrupt          truncation, bad lengths, CRC, unknown magic/codec, trailing bytes,
//                     undecompressable data                   CORRUPT_MESSAGE
//   kTooLarge         batch > max_batch_bytes, or decompresses beyond the limit
//                                                             MESSAGE_TOO_LARGE
//   kInvalidArgument  count/offset-delta mismatch, control batch, producer id without
//                     base sequence                           INVALID_RECORD
// An empty blob yields no batches; the one-batch-per-partition rule of
// produce v3+ is left to the caller. Base offsets are not checked (the
// leader overwrites them).
Result<std::vector<ValidatedBatch>> ValidateProduceRecords(ByteView records,
                                                           const ValidationLimits& limits);

}  // namespace strata::protocol
