#include "storage/record_scan.h"

#include <fmt/format.h>

namespace strata::storage {

namespace {

// Reads a zig-zag varint of at most `max_bytes` bytes; false when malformed.
bool ReadVarlong(ByteView data, size_t* pos, int max_bytes, int64_t* out) {
  uint64_t raw = 0;
  for (int i = 0; i < max_bytes; ++i) {
    if (*pos >= data.size()) return false;
    uint8_t b = data[(*pos)++];
    raw |= uint64_t(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      *out = static_cast<int64_t>(raw >> 1) ^ -static_cast<int64_t>(raw & 1);
      return true;
    }
  }
  return false;
}

}  // namespace

Status ForEachRecordTimestamp(ByteView batch, const protocol::BatchHeader& h,
                              const std::function<bool(int64_t, int64_t)>& visit) {
  if (h.log_append_time()) {
    for (int64_t off = h.base_offset; off <= h.last_offset(); ++off) {
      if (!visit(off, h.max_timestamp)) break;
    }
    return Status::Ok();
  }
  if (h.compression() != protocol::Compression::kNone) {
    return MakeError(Errc::kUnsupported, "compressed batch");
  }
  size_t pos = protocol::kBatchHeaderSize;
  for (int32_t i = 0; i < h.records_count; ++i) {
    int64_t length = 0, ts_delta = 0, off_delta = 0;
    if (!ReadVarlong(batch, &pos, 5, &length) || length < 0 ||
        static_cast<uint64_t>(length) > batch.size() - pos) {
      return MakeError(Errc::kCorrupt, fmt::format("record {} length malformed", i));
    }
    size_t next = pos + static_cast<size_t>(length);
    ByteView body = batch.subspan(0, next);
    ++pos;  // attributes
    if (!ReadVarlong(body, &pos, 10, &ts_delta) || !ReadVarlong(body, &pos, 5, &off_delta)) {
      return MakeError(Errc::kCorrupt, fmt::format("record {} malformed", i));
    }
    if (!visit(h.base_offset + off_delta, h.base_timestamp + ts_delta)) break;
    pos = next;
  }
  return Status::Ok();
}

}  // namespace strata::storage
