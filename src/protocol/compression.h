#pragma once
// Codecs for the records section of compressed v2 batches, in the wire
// formats Kafka clients actually produce:
//   gzip   - RFC 1952 stream (concatenated members accepted).
//   snappy - raw snappy block (librdkafka) or xerial framing (Java client:
//            "\x82SNAPPY\0", two BE int32 versions, then chunks of BE int32
//            length + raw block); chosen by the magic. We write xerial, the
//            form every client can read.
//   lz4    - LZ4 frame format (KIP-57), independent 64 KiB blocks.
//   zstd   - one or more zstd frames; content size need not be present.
// Decompression is bounded by `max_output` so a zip bomb costs at most that
// much memory and fails with kTooLarge. A zstd frame may also not demand a
// window larger than max(8 MiB, max_output) (kTooLarge), since the decoder
// allocates the window up front. Malformed input fails with kCorrupt.
// All functions are thread-safe (per-thread codec contexts are reused).
#include <cstddef>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/record_batch.h"

namespace strata::protocol {

// Lower-case Kafka name of the codec ("none", "gzip", ...); "unknown" otherwise.
const char* CompressionName(Compression codec);

// Decompresses `input`. kNone returns a copy (also bounded by max_output).
Result<Bytes> Decompress(Compression codec, ByteView input, size_t max_output);

// Compresses `input`. Fails only on an unknown codec or a library failure.
Result<Bytes> Compress(Compression codec, ByteView input);

}  // namespace strata::protocol
