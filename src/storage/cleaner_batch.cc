#include "storage/cleaner_batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "protocol/compression.h"

namespace strata::storage {

using protocol::BatchHeader;
using protocol::Record;

namespace {

// Attribute bits a rewritten batch inherits (timestamp type, transactional,
// control); the codec bits are added separately.
constexpr int16_t kInheritedAttributes = 0x8 | 0x10 | 0x20;

void PutUvarint(Bytes& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

void PutVarlong(Bytes& out, int64_t v) {
  PutUvarint(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

void PutSized(Bytes& out, const std::optional<ByteView>& b) {
  if (!b) {
    PutVarlong(out, -1);
    return;
  }
  PutVarlong(out, static_cast<int64_t>(b->size()));
  out.insert(out.end(), b->begin(), b->end());
}

// Appends one record (length-prefixed) with its timestamp delta rebased.
void EncodeRecord(const Record& r, int64_t timestamp_delta, Bytes& body, Bytes& out) {
  body.clear();
  body.push_back(0);  // record attributes (unused in v2)
  PutVarlong(body, timestamp_delta);
  PutVarlong(body, r.offset_delta);
  PutSized(body, r.key);
  PutSized(body, r.value);
  PutVarlong(body, static_cast<int64_t>(r.headers.size()));
  for (const auto& [key, value] : r.headers) {
    PutSized(body, ByteView(reinterpret_cast<const uint8_t*>(key.data()), key.size()));
    PutSized(body, value);
  }
  PutVarlong(out, static_cast<int64_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
}

// Header fields of a rebuilt batch; everything else comes from the original.
struct NewHeader {
  int16_t attributes = 0;
  int64_t base_timestamp = -1;
  int64_t max_timestamp = -1;
  int32_t records_count = 0;
};

Bytes AssembleBatch(const BatchHeader& h, const NewHeader& n, ByteView section) {
  Bytes b(protocol::kBatchHeaderSize);
  uint8_t* p = b.data();
  StoreBE64(p, static_cast<uint64_t>(h.base_offset.value()));
  StoreBE32(p + 8, static_cast<uint32_t>(protocol::kBatchHeaderSize - protocol::kLogOverhead +
                                         section.size()));
  StoreBE32(p + 12, static_cast<uint32_t>(h.partition_leader_epoch));
  p[16] = 2;
  StoreBE16(p + 21, static_cast<uint16_t>(n.attributes));
  StoreBE32(p + 23, static_cast<uint32_t>(h.last_offset_delta));
  StoreBE64(p + 27, static_cast<uint64_t>(n.base_timestamp));
  StoreBE64(p + 35, static_cast<uint64_t>(n.max_timestamp));
  StoreBE64(p + 43, static_cast<uint64_t>(h.producer_id));
  StoreBE16(p + 51, static_cast<uint16_t>(h.producer_epoch));
  StoreBE32(p + 53, static_cast<uint32_t>(h.base_sequence));
  StoreBE32(p + 57, static_cast<uint32_t>(n.records_count));
  b.insert(b.end(), section.begin(), section.end());
  StoreBE32(b.data() + protocol::kCrcOffset, protocol::ComputeBatchCrc(b));
  return b;
}

int64_t RecordTimestamp(const BatchHeader& h, const Record& r) {
  return static_cast<int64_t>(static_cast<uint64_t>(h.base_timestamp) +
                              static_cast<uint64_t>(r.timestamp_delta));
}

// Re-encodes the surviving records of `h` under a new header.
Result<Bytes> Rebuild(const BatchHeader& h, const std::vector<Record>& kept,
                      std::optional<int64_t> horizon) {
  NewHeader n;
  n.attributes = static_cast<int16_t>((h.attributes & kInheritedAttributes) |
                                      static_cast<int16_t>(h.compression()) |
                                      (horizon ? kDeleteHorizonFlag : 0));
  n.base_timestamp = horizon ? *horizon : RecordTimestamp(h, kept.front());
  n.max_timestamp = h.max_timestamp;
  if (!h.log_append_time()) {
    n.max_timestamp = RecordTimestamp(h, kept.front());
    for (const Record& r : kept) n.max_timestamp = std::max(n.max_timestamp, RecordTimestamp(h, r));
  }
  n.records_count = static_cast<int32_t>(kept.size());
  Bytes records;
  Bytes scratch;
  for (const Record& r : kept) {
    int64_t delta = static_cast<int64_t>(static_cast<uint64_t>(RecordTimestamp(h, r)) -
                                         static_cast<uint64_t>(n.base_timestamp));
    EncodeRecord(r, delta, scratch, records);
  }
  if (h.compression() == protocol::Compression::kNone) return AssembleBatch(h, n, records);
  STRATA_ASSIGN_OR_RETURN(Bytes section, protocol::Compress(h.compression(), records));
  return AssembleBatch(h, n, section);
}

// The records of batch `h` that `keep` accepts, in order; their views point
// into `batch` or, for a compressed batch, `scratch`. kCorrupt when the
// records cannot be parsed.
Result<std::vector<Record>> ReadRecords(ByteView batch, const BatchHeader& h,
                                        size_t max_decompressed_bytes, Bytes& scratch,
                                        const std::function<bool(const Record&)>& keep) {
  STRATA_ASSIGN_OR_RETURN(ByteView section,
                          protocol::RecordsSection(h, batch, max_decompressed_bytes, scratch));
  protocol::RecordParser parser(section);
  std::vector<Record> out;
  Record record;
  for (int32_t i = 0; i < h.records_count; ++i) {
    STRATA_RETURN_IF_ERROR(parser.Next(record));
    if (keep(record)) out.push_back(record);
  }
  STRATA_RETURN_IF_ERROR(protocol::CheckRecordsEnd(h, parser));
  return out;
}

}  // namespace

Bytes EmptyBatchLike(const BatchHeader& h) {
  NewHeader n;
  n.attributes = static_cast<int16_t>(h.attributes & kInheritedAttributes);
  n.base_timestamp = h.max_timestamp;
  n.max_timestamp = h.max_timestamp;
  n.records_count = 0;
  return AssembleBatch(h, n, ByteView());
}

Result<FilteredBatch> FilterControlBatch(ByteView batch, const BatchHeader& h,
                                         const BatchFilterOptions& options, int64_t now,
                                         bool discardable) {
  FilteredBatch out;
  out.records_read = h.records_count;
  out.records_retained = h.records_count;
  if (h.records_count == 0 || !discardable) {
    const bool keep = h.records_count > 0 || options.retain_empty;
    out.outcome = keep ? BatchOutcome::kOriginal : BatchOutcome::kDropped;
    return out;
  }
  std::optional<int64_t> horizon = DeleteHorizon(h);
  if (horizon && *horizon <= now) {
    out.records_retained = 0;
    if (options.retain_empty) {
      out.outcome = BatchOutcome::kRewritten;
      out.bytes = EmptyBatchLike(h);
    }
    return out;
  }
  if (horizon) {
    out.delete_horizon = *horizon;
    out.outcome = BatchOutcome::kOriginal;
    return out;
  }
  // First pass to find its transaction gone: stamp the horizon.
  Bytes scratch;
  STRATA_ASSIGN_OR_RETURN(std::vector<Record> records,
                          ReadRecords(batch, h, options.max_decompressed_bytes, scratch,
                                      [](const Record&) { return true; }));
  out.delete_horizon = options.new_delete_horizon;
  STRATA_ASSIGN_OR_RETURN(out.bytes, Rebuild(h, records, options.new_delete_horizon));
  out.outcome = BatchOutcome::kRewritten;
  return out;
}

Result<FilteredBatch> FilterBatch(ByteView batch, const BatchHeader& h,
                                  const BatchFilterOptions& options, const RecordRetainFn& retain) {
  FilteredBatch out;
  if (h.control()) {
    out.outcome = BatchOutcome::kOriginal;
    return out;
  }
  Bytes scratch;
  STRATA_ASSIGN_OR_RETURN(
      std::vector<Record> kept,
      ReadRecords(batch, h, options.max_decompressed_bytes, scratch,
                  [&](const Record& r) { return retain(h.base_offset + r.offset_delta, r); }));
  const bool kept_tombstone =
      std::any_of(kept.begin(), kept.end(), [](const Record& r) { return !r.value.has_value(); });
  out.records_read = h.records_count;
  out.records_retained = static_cast<int32_t>(kept.size());

  if (kept.empty()) {
    if (options.retain_empty) {
      out.outcome = BatchOutcome::kRewritten;
      out.bytes = EmptyBatchLike(h);
    }
    return out;
  }
  std::optional<int64_t> horizon = DeleteHorizon(h);
  const bool set_horizon = kept_tombstone && !horizon && options.new_delete_horizon >= 0;
  if (kept.size() == size_t(h.records_count) && !set_horizon) {
    if (kept_tombstone && horizon) out.delete_horizon = *horizon;
    out.outcome = BatchOutcome::kOriginal;
    return out;
  }
  if (set_horizon) horizon = options.new_delete_horizon;
  if (kept_tombstone && horizon) out.delete_horizon = *horizon;
  STRATA_ASSIGN_OR_RETURN(out.bytes, Rebuild(h, kept, horizon));
  out.outcome = BatchOutcome::kRewritten;
  return out;
}

}  // namespace strata::storage
