#include "protocol/record_batch.h"

#include <fmt/format.h>

#include "protocol/crc32c.h"

namespace strata::protocol {

Result<BatchHeader> ParseBatchHeader(ByteView data) {
  if (data.size() < static_cast<size_t>(kLogOverhead + 5)) {
    return MakeError(Errc::kCorrupt, fmt::format("batch header truncated: {} bytes", data.size()));
  }
  const uint8_t* p = data.data();
  BatchHeader h;
  h.base_offset = Offset(static_cast<int64_t>(LoadBE64(p)));
  h.batch_length = static_cast<int32_t>(LoadBE32(p + 8));
  h.partition_leader_epoch = static_cast<int32_t>(LoadBE32(p + 12));
  h.magic = static_cast<int8_t>(p[16]);
  if (h.magic != 2) {
    return MakeError(Errc::kUnsupported, fmt::format("record batch magic {} (only 2 is supported)",
                                                     static_cast<int>(h.magic)));
  }
  if (h.batch_length < kBatchHeaderSize - kLogOverhead) {
    return MakeError(Errc::kCorrupt, fmt::format("batch length {} below minimum", h.batch_length));
  }
  if (data.size() < static_cast<size_t>(kBatchHeaderSize)) {
    return MakeError(Errc::kCorrupt, "batch header truncated");
  }
  h.crc = LoadBE32(p + 17);
  h.attributes = static_cast<int16_t>(LoadBE16(p + 21));
  h.last_offset_delta = static_cast<int32_t>(LoadBE32(p + 23));
  h.base_timestamp = static_cast<int64_t>(LoadBE64(p + 27));
  h.max_timestamp = static_cast<int64_t>(LoadBE64(p + 35));
  h.producer_id = static_cast<int64_t>(LoadBE64(p + 43));
  h.producer_epoch = static_cast<int16_t>(LoadBE16(p + 51));
  h.base_sequence = static_cast<int32_t>(LoadBE32(p + 53));
  h.records_count = static_cast<int32_t>(LoadBE32(p + 57));
  return h;
}

uint32_t ComputeBatchCrc(ByteView batch) {
  return Crc32c(batch.data() + kAttributesOffset, batch.size() - kAttributesOffset);
}

bool BatchCrcValid(ByteView batch) {
  if (batch.size() < static_cast<size_t>(kBatchHeaderSize)) return false;
  return LoadBE32(batch.data() + kCrcOffset) == ComputeBatchCrc(batch);
}

void SetBaseOffset(MutableByteView batch, Offset base_offset) {
  StoreBE64(batch.data(), static_cast<uint64_t>(base_offset.value()));
}

void SetPartitionLeaderEpoch(MutableByteView batch, int32_t epoch) {
  StoreBE32(batch.data() + kPartitionLeaderEpochOffset, static_cast<uint32_t>(epoch));
}

void SetLogAppendTime(MutableByteView batch, int64_t timestamp_ms) {
  uint16_t attrs = LoadBE16(batch.data() + kAttributesOffset);
  StoreBE16(batch.data() + kAttributesOffset, attrs | 0x8);
  StoreBE64(batch.data() + kMaxTimestampOffset, static_cast<uint64_t>(timestamp_ms));
  StoreBE32(batch.data() + kCrcOffset, ComputeBatchCrc(batch));
}

}  // namespace strata::protocol
