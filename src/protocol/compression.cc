#include "protocol/compression.h"

#include <fmt/format.h>
#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>

namespace strata::protocol {
namespace {

constexpr size_t kMinGrowth = 64 * 1024;
constexpr uint8_t kXerialMagic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
constexpr size_t kXerialHeaderSize = 16;    // magic + version + compatible version
constexpr size_t kXerialChunk = 32 * 1024;  // the Java client's block size
constexpr int kZstdLevel = 3;               // Kafka's default level
constexpr int kZstdMinWindowLog = 23;
constexpr int kZstdMaxWindowLog = 27;  // zstd's own default limit
constexpr size_t kZstdKeepCtxBytes = 16u << 20;

Error Corrupt(Compression codec, std::string_view what) {
  return MakeError(Errc::kCorrupt,
                   fmt::format("{} decompression failed: {}", CompressionName(codec), what));
}

Error TooLarge(Compression codec, size_t max_output) {
  return MakeError(Errc::kTooLarge, fmt::format("{} data decompresses to more than {} bytes",
                                                CompressionName(codec), max_output));
}

// Decompression target that grows geometrically but never beyond max+1
// bytes: producing that extra byte is how the caller learns the limit was
// exceeded, without the decoder ever writing out of bounds.
class BoundedOutput {
 public:
  BoundedOutput(size_t max, size_t hint) : max_(max), limit_(max == SIZE_MAX ? SIZE_MAX : max + 1) {
    buf_.resize(std::min(limit_, std::max(hint, kMinGrowth)));
  }
  // Free space at the tail; never empty while !exceeded().
  MutableByteView Space() {
    if (used_ == buf_.size()) {
      size_t grown = buf_.size() > limit_ / 2
                         ? limit_
                         : std::min(limit_, std::max(kMinGrowth, buf_.size() * 2));
      buf_.resize(grown);
    }
    return MutableByteView(buf_.data() + used_, buf_.size() - used_);
  }
  void Commit(size_t n) { used_ += n; }
  bool exceeded() const { return used_ > max_; }
  Bytes Take() && {
    buf_.resize(used_);
    return std::move(buf_);
  }

 private:
  size_t max_;
  size_t limit_;
  size_t used_ = 0;
  Bytes buf_;
};

// ------------------------------------------------------------------ gzip

bool IsGzipMagic(ByteView in, size_t pos) {
  return in.size() - pos >= 2 && in[pos] == 0x1f && in[pos + 1] == 0x8b;
}

struct InflateEnd {
  void operator()(z_stream* zs) const { inflateEnd(zs); }
};

Result<Bytes> Gunzip(ByteView in, size_t max_output) {
  z_stream zs{};
  // 32 + MAX_WBITS: accept gzip (and, leniently, zlib) headers.
  if (inflateInit2(&zs, 32 + MAX_WBITS) != Z_OK) return Corrupt(Compression::kGzip, "inflateInit2");
  std::unique_ptr<z_stream, InflateEnd> guard(&zs);
  BoundedOutput out(max_output, in.size() * 4);
  size_t fed = 0;  // bytes of `in` handed to zlib so far
  for (;;) {
    if (zs.avail_in == 0 && fed < in.size()) {
      size_t n = std::min<size_t>(in.size() - fed, UINT_MAX);
      zs.next_in = const_cast<Bytef*>(in.data() + fed);  // zlib's API is not const-correct
      zs.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    MutableByteView space = out.Space();
    size_t avail = std::min<size_t>(space.size(), UINT_MAX);
    zs.next_out = space.data();
    zs.avail_out = static_cast<uInt>(avail);
    int rc = inflate(&zs, Z_NO_FLUSH);
    out.Commit(avail - zs.avail_out);
    if (out.exceeded()) return TooLarge(Compression::kGzip, max_output);
    if (rc == Z_STREAM_END) {
      size_t pos = fed - zs.avail_in;
      if (pos == in.size()) return std::move(out).Take();
      // Concatenated members (RFC 1952 2.2) are one stream.
      if (!IsGzipMagic(in, pos)) return Corrupt(Compression::kGzip, "trailing bytes after stream");
      inflateReset(&zs);
    } else if (rc == Z_BUF_ERROR) {
      // No progress with output space available: input ran out mid-stream.
      if (zs.avail_in != 0 || fed == in.size()) return Corrupt(Compression::kGzip, "truncated");
    } else if (rc != Z_OK) {
      return Corrupt(Compression::kGzip, zs.msg != nullptr ? zs.msg : "inflate error");
    }
  }
}

struct DeflateEnd {
  void operator()(z_stream* zs) const { deflateEnd(zs); }
};

Result<Bytes> Gzip(ByteView in) {
  if (in.size() > UINT_MAX) return MakeError(Errc::kTooLarge, "gzip input over 4 GiB");
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return MakeError(Errc::kIoError, "deflateInit2 failed");
  }
  std::unique_ptr<z_stream, DeflateEnd> guard(&zs);
  Bytes out(deflateBound(&zs, in.size()));
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) return MakeError(Errc::kIoError, "deflate failed");
  out.resize(zs.total_out);
  return out;
}

// ---------------------------------------------------------------- snappy

// Appends one raw snappy block to `out`, checking the size it announces
// against the remaining budget before allocating.
Status AppendRawSnappy(ByteView block, size_t max_output, Bytes& out) {
  const char* src = reinterpret_cast<const char*>(block.data());
  size_t n = 0;
  if (!snappy::GetUncompressedLength(src, block.size(), &n)) {
    return Corrupt(Compression::kSnappy, "bad block length");
  }
  if (n > max_output - out.size()) return TooLarge(Compression::kSnappy, max_output);
  size_t old = out.size();
  out.resize(old + n);
  if (!snappy::RawUncompress(src, block.size(), reinterpret_cast<char*>(out.data() + old))) {
    return Corrupt(Compression::kSnappy, "malformed block");
  }
  return Status::Ok();
}

bool IsXerial(ByteView in) {
  return in.size() >= sizeof(kXerialMagic) &&
         std::memcmp(in.data(), kXerialMagic, sizeof(kXerialMagic)) == 0;
}

Result<Bytes> XerialUnsnappy(ByteView in, size_t max_output) {
  if (in.size() < kXerialHeaderSize)
    return Corrupt(Compression::kSnappy, "truncated xerial header");
  // The two version int32s are not checked: every writer uses 1/1 and the
  // chunk layout has never changed.
  Bytes out;
  size_t pos = kXerialHeaderSize;
  while (pos < in.size()) {
    if (in.size() - pos < 4) return Corrupt(Compression::kSnappy, "truncated xerial chunk length");
    int32_t len = static_cast<int32_t>(LoadBE32(in.data() + pos));
    pos += 4;
    if (len <= 0 || static_cast<size_t>(len) > in.size() - pos) {
      return Corrupt(Compression::kSnappy, fmt::format("bad xerial chunk length {}", len));
    }
    STRATA_RETURN_IF_ERROR(AppendRawSnappy(in.subspan(pos, len), max_output, out));
    pos += len;
  }
  return out;
}

Result<Bytes> Unsnappy(ByteView in, size_t max_output) {
  if (IsXerial(in)) return XerialUnsnappy(in, max_output);
  Bytes out;
  STRATA_RETURN_IF_ERROR(AppendRawSnappy(in, max_output, out));
  return out;
}

Result<Bytes> XerialSnappy(ByteView in) {
  Bytes out(kXerialHeaderSize);
  std::memcpy(out.data(), kXerialMagic, sizeof(kXerialMagic));
  StoreBE32(out.data() + 8, 1);   // version
  StoreBE32(out.data() + 12, 1);  // minimum compatible version
  for (size_t pos = 0; pos < in.size(); pos += kXerialChunk) {
    size_t n = std::min(kXerialChunk, in.size() - pos);
    size_t at = out.size();
    out.resize(at + 4 + snappy::MaxCompressedLength(n));
    size_t written = 0;
    snappy::RawCompress(reinterpret_cast<const char*>(in.data() + pos), n,
                        reinterpret_cast<char*>(out.data() + at + 4), &written);
    StoreBE32(out.data() + at, static_cast<uint32_t>(written));
    out.resize(at + 4 + written);
  }
  return out;
}

// ------------------------------------------------------------------- lz4

struct Lz4DctxFree {
  void operator()(LZ4F_dctx* c) const { LZ4F_freeDecompressionContext(c); }
};

using Lz4Dctx = std::unique_ptr<LZ4F_dctx, Lz4DctxFree>;

Result<Bytes> Unlz4With(LZ4F_dctx* ctx, ByteView in, size_t max_output) {
  BoundedOutput out(max_output, in.size() * 4);
  size_t pos = 0;
  for (;;) {
    MutableByteView space = out.Space();
    size_t dst_size = space.size();
    size_t src_size = in.size() - pos;
    size_t hint =
        LZ4F_decompress(ctx, space.data(), &dst_size, in.data() + pos, &src_size, nullptr);
    if (LZ4F_isError(hint)) return Corrupt(Compression::kLz4, LZ4F_getErrorName(hint));
    pos += src_size;
    out.Commit(dst_size);
    if (out.exceeded()) return TooLarge(Compression::kLz4, max_output);
    // hint == 0: a frame ended; anything left is a further frame.
    if (hint == 0 && pos == in.size()) return std::move(out).Take();
    // Out of input with room left for output: the frame is incomplete.
    if (pos == in.size() && dst_size < space.size()) return Corrupt(Compression::kLz4, "truncated");
    if (src_size == 0 && dst_size == 0) return Corrupt(Compression::kLz4, "no progress");
  }
}

Result<Bytes> Unlz4(ByteView in, size_t max_output) {
  // The per-thread context is reused only after frames that ended cleanly:
  // liblz4 1.9.4 keeps the remaining content size of an abandoned frame even
  // across LZ4F_resetDecompressionContext, failing the next frame.
  thread_local Lz4Dctx ctx;
  if (ctx == nullptr) {
    LZ4F_dctx* c = nullptr;
    size_t rc = LZ4F_createDecompressionContext(&c, LZ4F_VERSION);
    STRATA_CHECK(!LZ4F_isError(rc), "LZ4F_createDecompressionContext: {}", LZ4F_getErrorName(rc));
    ctx.reset(c);
  }
  Result<Bytes> out = Unlz4With(ctx.get(), in, max_output);
  if (!out.ok()) ctx.reset();
  return out;
}

Result<Bytes> Lz4(ByteView in) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  // Kafka's Java reader decodes each block on its own: blocks must be independent.
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  Bytes out(LZ4F_compressFrameBound(in.size(), &prefs));
  size_t n = LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), &prefs);
  if (LZ4F_isError(n)) return MakeError(Errc::kIoError, LZ4F_getErrorName(n));
  out.resize(n);
  return out;
}

// ------------------------------------------------------------------ zstd

struct ZstdDctxFree {
  void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};
struct ZstdCctxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

using ZstdDctx = std::unique_ptr<ZSTD_DCtx, ZstdDctxFree>;

// Largest window a frame may ask for: what max_output needs, but at least
// 8 MiB (zstd level 19 streaming without a pledged size). The window is
// allocated up front, so without this a tiny frame could claim 128 MiB.
int ZstdWindowLogMax(size_t max_output) {
  int log = kZstdMinWindowLog;
  while (log < kZstdMaxWindowLog && (size_t{1} << log) < max_output) ++log;
  return log;
}

Result<Bytes> UnzstdWith(ZSTD_DCtx* ctx, ByteView in, size_t max_output) {
  unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR &&
      declared > max_output) {
    return TooLarge(Compression::kZstd, max_output);
  }
  BoundedOutput out(max_output, in.size() * 4);
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  for (;;) {
    MutableByteView space = out.Space();
    ZSTD_outBuffer dst{space.data(), space.size(), 0};
    size_t before = src.pos;
    size_t rc = ZSTD_decompressStream(ctx, &dst, &src);
    if (ZSTD_isError(rc)) {
      if (ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge) {
        return MakeError(Errc::kTooLarge, "zstd frame window exceeds the decompression limit");
      }
      return Corrupt(Compression::kZstd, ZSTD_getErrorName(rc));
    }
    out.Commit(dst.pos);
    if (out.exceeded()) return TooLarge(Compression::kZstd, max_output);
    // rc == 0: a frame ended and is fully flushed; more input is another frame.
    if (rc == 0 && src.pos == src.size) return std::move(out).Take();
    if (src.pos == src.size && dst.pos < dst.size) return Corrupt(Compression::kZstd, "truncated");
    if (src.pos == before && dst.pos == 0) return Corrupt(Compression::kZstd, "no progress");
  }
}

Result<Bytes> Unzstd(ByteView in, size_t max_output) {
  thread_local ZstdDctx ctx;
  if (ctx == nullptr) {
    ctx.reset(ZSTD_createDCtx());
    STRATA_CHECK(ctx != nullptr, "ZSTD_createDCtx failed");
  }
  ZSTD_DCtx_reset(ctx.get(), ZSTD_reset_session_and_parameters);
  ZSTD_DCtx_setParameter(ctx.get(), ZSTD_d_windowLogMax, ZstdWindowLogMax(max_output));
  Result<Bytes> out = UnzstdWith(ctx.get(), in, max_output);
  // Do not keep a large window allocated per thread after an unusual frame.
  if (ZSTD_sizeof_DCtx(ctx.get()) > kZstdKeepCtxBytes) ctx.reset();
  return out;
}

Result<Bytes> Zstd(ByteView in) {
  thread_local std::unique_ptr<ZSTD_CCtx, ZstdCctxFree> ctx(ZSTD_createCCtx());
  STRATA_CHECK(ctx != nullptr, "ZSTD_createCCtx failed");
  Bytes out(ZSTD_compressBound(in.size()));
  size_t n = ZSTD_compressCCtx(ctx.get(), out.data(), out.size(), in.data(), in.size(), kZstdLevel);
  if (ZSTD_isError(n)) return MakeError(Errc::kIoError, ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

Error UnknownCodec(Compression codec) {
  return MakeError(Errc::kCorrupt,
                   fmt::format("unknown compression codec {}", static_cast<int>(codec)));
}

}  // namespace

const char* CompressionName(Compression codec) {
  switch (codec) {
    case Compression::kNone:
      return "none";
    case Compression::kGzip:
      return "gzip";
    case Compression::kSnappy:
      return "snappy";
    case Compression::kLz4:
      return "lz4";
    case Compression::kZstd:
      return "zstd";
  }
  return "unknown";
}

Result<Bytes> Decompress(Compression codec, ByteView input, size_t max_output) {
  switch (codec) {
    case Compression::kNone:
      if (input.size() > max_output) return TooLarge(codec, max_output);
      return Bytes(input.begin(), input.end());
    case Compression::kGzip:
      return Gunzip(input, max_output);
    case Compression::kSnappy:
      return Unsnappy(input, max_output);
    case Compression::kLz4:
      return Unlz4(input, max_output);
    case Compression::kZstd:
      return Unzstd(input, max_output);
  }
  return UnknownCodec(codec);
}

Result<Bytes> Compress(Compression codec, ByteView input) {
  switch (codec) {
    case Compression::kNone:
      return Bytes(input.begin(), input.end());
    case Compression::kGzip:
      return Gzip(input);
    case Compression::kSnappy:
      return XerialSnappy(input);
    case Compression::kLz4:
      return Lz4(input);
    case Compression::kZstd:
      return Zstd(input);
  }
  return UnknownCodec(codec);
}

}  // namespace strata::protocol
