// libFuzzer target for produce-side record validation and record iteration:
// arbitrary bytes must yield an error, never a crash, leak or unbounded
// allocation.
//
// Input: byte 0 selects modes, the rest is a produce "records" blob.
//   bit 0: recompute the CRC of every whole batch first, so mutations reach
//          record parsing and decompression instead of dying at the CRC check
//   bit 1: also run Decompress on the blob with codec (byte0 >> 2) % 5
// A useful seed corpus is any set of BatchBuilder outputs (all codecs),
// prefixed with a mode byte of 1.
#include <cstddef>
#include <cstdint>

#include "protocol/compression.h"
#include "protocol/record_batch.h"
#include "protocol/records.h"

namespace {

using strata::Bytes;
using strata::ByteView;
using strata::Status;
using namespace strata::protocol;

constexpr size_t kLimit = 1 << 20;

// Size of the well-formed-looking batch at the start of `rest`, or 0.
size_t BatchSizeAt(ByteView rest) {
  auto h = ParseBatchHeader(rest);
  if (!h.ok()) return 0;
  size_t size = static_cast<size_t>(h->batch_length) + kLogOverhead;
  return size <= rest.size() ? size : 0;
}

void FixCrcs(Bytes& blob) {
  size_t pos = 0;
  while (size_t size = BatchSizeAt(ByteView(blob).subspan(pos))) {
    uint8_t* batch = blob.data() + pos;
    strata::StoreBE32(batch + kCrcOffset, ComputeBatchCrc(ByteView(batch, size)));
    pos += size;
  }
}

// Reads every byte a record points at, so ASan sees any bad view.
uint32_t Touch(const Record& r) {
  uint32_t sum = static_cast<uint32_t>(r.offset_delta) + static_cast<uint32_t>(r.timestamp_delta);
  auto add = [&sum](ByteView v) {
    for (uint8_t b : v) sum = sum * 31 + b;
  };
  if (r.key) add(*r.key);
  if (r.value) add(*r.value);
  for (const auto& [k, v] : r.headers) {
    for (char c : k) sum = sum * 31 + static_cast<uint8_t>(c);
    if (v) add(*v);
  }
  return sum;
}

void IterateAll(ByteView blob) {
  volatile uint32_t sink = 0;
  size_t pos = 0;
  while (pos < blob.size()) {
    ByteView rest = blob.subspan(pos);
    auto h = ParseBatchHeader(rest);
    if (!h.ok()) return;
    Status st = ForEachRecord(*h, rest, kLimit, [&sink](const Record& r) {
      sink = sink + Touch(r);
      return strata::Status::Ok();
    });
    (void)st;
    size_t size = static_cast<size_t>(h->batch_length) + kLogOverhead;
    if (size > rest.size()) return;
    pos += size;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  Bytes blob(data + 1, data + size);
  if (mode & 1) FixCrcs(blob);

  ValidationLimits limits;
  limits.max_batch_bytes = kLimit;
  limits.max_decompressed_bytes = kLimit;
  auto validated = ValidateProduceRecords(blob, limits);
  if (validated.ok()) {
    // Whatever validation accepted must iterate cleanly.
    for (const ValidatedBatch& b : *validated) {
      ByteView batch = ByteView(blob).subspan(b.position, b.size);
      Status st = ForEachRecord(b.header, batch, kLimit,
                                [](const Record&) { return strata::Status::Ok(); });
      if (!st.ok()) __builtin_trap();
    }
  }
  IterateAll(blob);

  if (mode & 2) {
    auto codec = static_cast<Compression>((mode >> 2) % 5);
    auto out = Decompress(codec, blob, kLimit);
    if (out.ok() && out->size() > kLimit) __builtin_trap();
  }
  return 0;
}
