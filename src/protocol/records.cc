#include "protocol/records.h"

#include <fmt/format.h>

#include "protocol/compression.h"

namespace strata::protocol {
namespace {

// Bounds-checked reader over one record's bytes. The first failure is
// sticky and remembers which field it was, for the error message.
class Cursor {
 public:
  explicit Cursor(ByteView data) : data_(data) {}

  bool ok() const { return failed_field_ == nullptr; }
  const char* failed_field() const { return failed_field_; }
  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

  void Skip(size_t n, const char* field) {
    if (n > remaining()) return Fail(field);
    pos_ += n;
  }
  ByteView Take(size_t n, const char* field) {
    if (n > remaining()) {
      Fail(field);
      return {};
    }
    ByteView v = data_.subspan(pos_, n);
    pos_ += n;
    return v;
  }
  // Zig-zag varint of at most 5 bytes; bits beyond 32 are dropped, as the
  // Java client does.
  int32_t Varint(const char* field) {
    uint32_t u = 0;
    for (int shift = 0; shift <= 28; shift += 7) {
      if (remaining() == 0) break;
      uint8_t b = data_[pos_++];
      u |= uint32_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return static_cast<int32_t>((u >> 1) ^ (~(u & 1) + 1));
    }
    Fail(field);
    return 0;
  }
  // Zig-zag varlong of at most 10 bytes.
  int64_t Varlong(const char* field) {
    uint64_t u = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
      if (remaining() == 0) break;
      uint8_t b = data_[pos_++];
      u |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
    }
    Fail(field);
    return 0;
  }
  // Varint length then that many bytes; -1 means null when `nullable`.
  std::optional<ByteView> Sized(bool nullable, const char* field) {
    int32_t n = Varint(field);
    if (!ok()) return std::nullopt;
    if (n == -1 && nullable) return std::nullopt;
    if (n < 0) {
      Fail(field);
      return std::nullopt;
    }
    return Take(static_cast<size_t>(n), field);
  }
  void Fail(const char* field) {
    if (failed_field_ == nullptr) failed_field_ = field;
  }

 private:
  ByteView data_;
  size_t pos_ = 0;
  const char* failed_field_ = nullptr;
};

Error Malformed(const Cursor& c) {
  return MakeError(Errc::kCorrupt, fmt::format("malformed record: bad {}", c.failed_field()));
}

Error InvalidRecord(std::string what) {
  return MakeError(Errc::kInvalidArgument, "INVALID_RECORD: " + what);
}

// Header-level produce rules; the records themselves are checked later.
Status CheckProducedHeader(const BatchHeader& h) {
  int64_t count_from_offsets = int64_t(h.last_offset_delta) + 1;
  if (count_from_offsets <= 0 || h.records_count <= 0 || count_from_offsets != h.records_count) {
    return InvalidRecord(fmt::format("batch has {} records but lastOffsetDelta {}", h.records_count,
                                     h.last_offset_delta));
  }
  if (h.control()) return InvalidRecord("clients may not write control batches");
  if (h.producer_id >= 0 && h.base_sequence < 0) {
    return InvalidRecord(
        fmt::format("producer id {} with base sequence {}", h.producer_id, h.base_sequence));
  }
  return Status::Ok();
}

// Framing checks, in Kafka's order: magic, size bounds, limit, CRC, header.
Result<BatchHeader> CheckProducedFrame(ByteView rest, const ValidationLimits& limits) {
  if (rest.size() <= static_cast<size_t>(kMagicOffset)) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("truncated batch: {} trailing bytes", rest.size()));
  }
  int magic = static_cast<int8_t>(rest[kMagicOffset]);
  if (magic == 0 || magic == 1) {
    return MakeError(Errc::kUnsupported,
                     fmt::format("old message formats are not supported (magic {}); "
                                 "use a client that writes record batch v2",
                                 magic));
  }
  if (magic != 2) return MakeError(Errc::kCorrupt, fmt::format("invalid magic {}", magic));
  int32_t batch_length = static_cast<int32_t>(LoadBE32(rest.data() + 8));
  if (batch_length < kBatchHeaderSize - kLogOverhead) {
    return MakeError(Errc::kCorrupt, fmt::format("batch length {} below minimum", batch_length));
  }
  size_t size = static_cast<size_t>(batch_length) + kLogOverhead;
  if (size > limits.max_batch_bytes) {
    return MakeError(Errc::kTooLarge, fmt::format("batch of {} bytes exceeds max.message.bytes {}",
                                                  size, limits.max_batch_bytes));
  }
  if (size > rest.size()) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("truncated batch: {} bytes of {}", rest.size(), size));
  }
  ByteView batch = rest.first(size);
  STRATA_ASSIGN_OR_RETURN(BatchHeader h, ParseBatchHeader(batch));
  if (!BatchCrcValid(batch)) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("CORRUPT_MESSAGE: batch CRC {:#010x} but content has {:#010x}",
                                 h.crc, ComputeBatchCrc(batch)));
  }
  STRATA_RETURN_IF_ERROR(CheckProducedHeader(h));
  return h;
}

Result<ValidatedBatch> ValidateProducedBatch(ByteView rest, size_t position,
                                             const ValidationLimits& limits) {
  STRATA_ASSIGN_OR_RETURN(BatchHeader h, CheckProducedFrame(rest, limits));
  ValidatedBatch v;
  v.header = h;
  v.position = position;
  v.size = static_cast<size_t>(h.batch_length) + kLogOverhead;
  int32_t index = 0;
  auto visit = [&](const Record& r) -> Status {
    if (r.offset_delta != index) {
      return InvalidRecord(fmt::format("record {} has offset delta {}", index, r.offset_delta));
    }
    // Wrapping add: a hostile delta must not be undefined behaviour.
    int64_t ts = static_cast<int64_t>(static_cast<uint64_t>(h.base_timestamp) +
                                      static_cast<uint64_t>(r.timestamp_delta));
    if (index == 0 || ts > v.max_timestamp) {
      v.max_timestamp = ts;
      v.offset_delta_of_max_timestamp = index;
    }
    ++index;
    return Status::Ok();
  };
  STRATA_RETURN_IF_ERROR(ForEachRecord(h, rest, limits.max_decompressed_bytes, visit));
  return v;
}

}  // namespace

Status RecordParser::Next(Record& out) {
  Cursor outer(data_.subspan(pos_));
  int32_t length = outer.Varint("record length");
  if (outer.ok() && length < 0) outer.Fail("record length");
  if (!outer.ok()) return Malformed(outer);
  ByteView body = outer.Take(static_cast<size_t>(length), "record length");
  if (!outer.ok()) return Malformed(outer);

  Cursor c(body);
  c.Skip(1, "record attributes");  // unused in v2
  out.timestamp_delta = c.Varlong("timestamp delta");
  out.offset_delta = c.Varint("offset delta");
  out.key = c.Sized(true, "key");
  out.value = c.Sized(true, "value");
  int32_t header_count = c.Varint("header count");
  // A header takes at least two bytes; this also bounds the loop.
  if (c.ok() && (header_count < 0 || static_cast<size_t>(header_count) > c.remaining() / 2)) {
    c.Fail("header count");
  }
  out.headers.clear();
  for (int32_t i = 0; c.ok() && i < header_count; ++i) {
    std::optional<ByteView> key = c.Sized(false, "header key");
    std::optional<ByteView> value = c.Sized(true, "header value");
    if (!c.ok()) break;
    out.headers.emplace_back(
        std::string_view(reinterpret_cast<const char*>(key->data()), key->size()), value);
  }
  if (!c.ok()) return Malformed(c);
  if (c.remaining() != 0) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("record length {} leaves {} unread bytes", length, c.remaining()));
  }
  pos_ += outer.position();
  return Status::Ok();
}

Result<ByteView> RecordsSection(const BatchHeader& header, ByteView batch, size_t max_decompressed,
                                Bytes& scratch) {
  if (header.batch_length < kBatchHeaderSize - kLogOverhead) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("batch length {} below minimum", header.batch_length));
  }
  // Not header.size_in_bytes(): that overflows int32 for hostile lengths.
  size_t size = static_cast<size_t>(header.batch_length) + kLogOverhead;
  if (batch.size() < size) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("truncated batch: {} bytes of {}", batch.size(), size));
  }
  ByteView body = batch.subspan(kBatchHeaderSize, size - kBatchHeaderSize);
  Compression codec = header.compression();
  if (codec == Compression::kNone) return body;
  if (static_cast<int>(codec) > static_cast<int>(Compression::kZstd)) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("unknown compression codec {}", static_cast<int>(codec)));
  }
  STRATA_ASSIGN_OR_RETURN(scratch, Decompress(codec, body, max_decompressed));
  return ByteView(scratch);
}

Status CheckRecordsEnd(const BatchHeader& header, const RecordParser& parser) {
  if (header.records_count < 0) {
    return MakeError(Errc::kCorrupt, fmt::format("negative record count {}", header.records_count));
  }
  if (parser.remaining() != 0) {
    return MakeError(Errc::kCorrupt, fmt::format("{} bytes follow the last of {} records",
                                                 parser.remaining(), header.records_count));
  }
  return Status::Ok();
}

Result<std::vector<ValidatedBatch>> ValidateProduceRecords(ByteView records,
                                                           const ValidationLimits& limits) {
  std::vector<ValidatedBatch> batches;
  size_t pos = 0;
  while (pos < records.size()) {
    Result<ValidatedBatch> b = ValidateProducedBatch(records.subspan(pos), pos, limits);
    if (!b.ok()) {
      Error e = b.take_error();
      e.message = fmt::format("batch at byte {}: {}", pos, e.message);
      return e;
    }
    pos += b->size;
    batches.push_back(std::move(b).value());
  }
  return batches;
}

}  // namespace strata::protocol
