#pragma once
// Record batch v2 (magic 2) header: parsing, checksum, and the few fields the
// broker rewrites in place (base offset, partition leader epoch, max timestamp
// for LogAppendTime). Batches are otherwise stored exactly as received.
//
// Layout (big-endian), offsets in bytes:
//   0 baseOffset i64 | 8 batchLength i32 | 12 partitionLeaderEpoch i32 |
//   16 magic i8 | 17 crc u32 | 21 attributes i16 | 23 lastOffsetDelta i32 |
//   27 baseTimestamp i64 | 35 maxTimestamp i64 | 43 producerId i64 |
//   51 producerEpoch i16 | 53 baseSequence i32 | 57 recordsCount i32 | 61 records
// batchLength counts the bytes after the batchLength field; the CRC covers
// attributes through the end of the batch.
#include <cstdint>

#include "base/bytes.h"
#include "base/offset.h"
#include "base/result.h"

namespace strata::protocol {

inline constexpr int kBatchHeaderSize = 61;
inline constexpr int kLogOverhead = 12;  // baseOffset + batchLength
inline constexpr int kMagicOffset = 16;
inline constexpr int kCrcOffset = 17;
inline constexpr int kAttributesOffset = 21;
inline constexpr int kMaxTimestampOffset = 35;
inline constexpr int kPartitionLeaderEpochOffset = 12;

enum class Compression : int8_t { kNone = 0, kGzip = 1, kSnappy = 2, kLz4 = 3, kZstd = 4 };

// Parsed view of one batch header; does not own the bytes.
struct BatchHeader {
  Offset base_offset;
  int32_t batch_length = 0;  // bytes after the length field
  int32_t partition_leader_epoch = -1;
  int8_t magic = 2;
  uint32_t crc = 0;
  int16_t attributes = 0;
  int32_t last_offset_delta = 0;
  int64_t base_timestamp = 0;
  int64_t max_timestamp = 0;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  int32_t records_count = 0;

  // 64-bit so a hostile batch_length cannot overflow.
  int64_t size_in_bytes() const { return int64_t{batch_length} + kLogOverhead; }
  // Wraps instead of overflowing on a hostile base offset (callers validate).
  Offset last_offset() const {
    return Offset(static_cast<int64_t>(static_cast<uint64_t>(base_offset.value()) +
                                       static_cast<uint64_t>(last_offset_delta)));
  }
  Compression compression() const { return static_cast<Compression>(attributes & 0x7); }
  bool log_append_time() const { return (attributes & 0x8) != 0; }
  bool transactional() const { return (attributes & 0x10) != 0; }
  bool control() const { return (attributes & 0x20) != 0; }
  bool idempotent() const { return producer_id >= 0; }
  int32_t last_sequence() const {
    // Sequences wrap at INT32_MAX as in Kafka.
    if (base_sequence < 0) return -1;
    int64_t last = int64_t(base_sequence) + last_offset_delta;
    return last > INT32_MAX ? int32_t(last - INT32_MAX - 1) : int32_t(last);
  }
};

// Reads the header at the start of `data`. Checks only that the header fits
// and that batchLength is sane; does not read the records.
Result<BatchHeader> ParseBatchHeader(ByteView data);

// Computes the CRC-32C a batch should carry (attributes..end).
uint32_t ComputeBatchCrc(ByteView batch);

// True when the stored CRC matches. `batch` must be exactly one whole batch.
bool BatchCrcValid(ByteView batch);

// In-place rewrites used when appending as leader.
void SetBaseOffset(MutableByteView batch, Offset base_offset);
void SetPartitionLeaderEpoch(MutableByteView batch, int32_t epoch);
// Sets maxTimestamp and the LogAppendTime attribute bit, then recomputes the CRC.
void SetLogAppendTime(MutableByteView batch, int64_t timestamp_ms);

}  // namespace strata::protocol
