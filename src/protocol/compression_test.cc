#include "protocol/compression.h"

#include <gtest/gtest.h>
#include <lz4frame.h>
#include <snappy.h>
#include <zstd.h>

#include <random>
#include <string>

namespace strata::protocol {
namespace {

constexpr size_t kMiB = 1 << 20;

// Compressible but not trivial: words from a small vocabulary, random order.
Bytes TextLike(size_t n, uint32_t seed) {
  static const char* kWords[] = {"kafka ",  "strata ", "record ",  "batch ",
                                 "offset ", "leader ", "replica ", "segment "};
  std::mt19937 rng(seed);
  Bytes out;
  out.reserve(n + 16);
  while (out.size() < n) {
    const char* w = kWords[rng() % 8];
    out.insert(out.end(), w, w + std::char_traits<char>::length(w));
  }
  out.resize(n);
  return out;
}

Bytes Cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Bytes RawSnappy(const Bytes& in) {
  std::string out;
  snappy::Compress(reinterpret_cast<const char*>(in.data()), in.size(), &out);
  return Bytes(out.begin(), out.end());
}

// xerial framing: magic, version 1, compatible version 1, then chunks.
Bytes Xerial(const std::vector<Bytes>& chunks) {
  Bytes out = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
  for (const Bytes& c : chunks) {
    Bytes block = RawSnappy(c);
    uint8_t len[4];
    StoreBE32(len, static_cast<uint32_t>(block.size()));
    out.insert(out.end(), len, len + 4);
    out.insert(out.end(), block.begin(), block.end());
  }
  return out;
}

class CodecTest : public ::testing::TestWithParam<Compression> {};

TEST_P(CodecTest, RoundTripEmpty) {
  auto c = Compress(GetParam(), {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto d = Decompress(GetParam(), *c, 0);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(d->empty());
}

TEST_P(CodecTest, RoundTripSmall) {
  Bytes in = {'h', 'e', 'l', 'l', 'o'};
  auto c = Compress(GetParam(), in);
  ASSERT_TRUE(c.ok());
  auto d = Decompress(GetParam(), *c, in.size());
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, in);
}

TEST_P(CodecTest, RoundTripOneMiB) {
  Bytes in = TextLike(kMiB, 7);
  auto c = Compress(GetParam(), in);
  ASSERT_TRUE(c.ok());
  if (GetParam() != Compression::kNone) {
    EXPECT_LT(c->size(), in.size() / 2);
  }
  auto d = Decompress(GetParam(), *c, kMiB);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, in);
}

TEST_P(CodecTest, RoundTripIncompressible) {
  std::mt19937 rng(3);
  Bytes in(300000);
  for (auto& b : in) b = static_cast<uint8_t>(rng());
  auto c = Compress(GetParam(), in);
  ASSERT_TRUE(c.ok());
  auto d = Decompress(GetParam(), *c, in.size());
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, in);
}

// A 1 MiB run of zeros is the zip bomb in miniature: one byte short of its
// size must fail with kTooLarge, its exact size must pass.
TEST_P(CodecTest, OutputBoundIsExact) {
  Bytes zeros(kMiB, 0);
  auto c = Compress(GetParam(), zeros);
  ASSERT_TRUE(c.ok());
  auto over = Decompress(GetParam(), *c, kMiB - 1);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, Errc::kTooLarge);
  auto exact = Decompress(GetParam(), *c, kMiB);
  ASSERT_TRUE(exact.ok()) << exact.error().message;
  EXPECT_EQ(exact->size(), kMiB);
}

// Codecs with framing that can be truncated or garbled.
class CompressedCodecTest : public ::testing::TestWithParam<Compression> {};

TEST_P(CompressedCodecTest, TruncatedIsCorrupt) {
  Bytes in = TextLike(100000, 11);
  auto c = Compress(GetParam(), in);
  ASSERT_TRUE(c.ok());
  Bytes cut(c->begin(), c->begin() + c->size() / 2);
  auto d = Decompress(GetParam(), cut, kMiB);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, Errc::kCorrupt) << d.error().message;
  auto empty = Decompress(GetParam(), {}, kMiB);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, Errc::kCorrupt);
}

TEST_P(CompressedCodecTest, GarbageIsCorrupt) {
  Bytes garbage = TextLike(1000, 5);
  auto d = Decompress(GetParam(), garbage, kMiB);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, Errc::kCorrupt) << d.error().message;
  EXPECT_NE(d.error().message.find(CompressionName(GetParam())), std::string::npos);
}

// A failed decode must not poison the per-thread context for the next one.
TEST_P(CompressedCodecTest, FailureDoesNotAffectNextCall) {
  Bytes in = TextLike(100000, 12);
  Bytes good = *Compress(GetParam(), in);
  Bytes cut(good.begin(), good.begin() + good.size() / 2);
  EXPECT_EQ(Decompress(GetParam(), cut, kMiB).error().code, Errc::kCorrupt);
  EXPECT_EQ(Decompress(GetParam(), good, 1000).error().code, Errc::kTooLarge);
  auto d = Decompress(GetParam(), good, kMiB);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, in);
}

INSTANTIATE_TEST_SUITE_P(Compressed, CompressedCodecTest,
                         ::testing::Values(Compression::kGzip, Compression::kSnappy,
                                           Compression::kLz4, Compression::kZstd),
                         [](const auto& info) { return std::string(CompressionName(info.param)); });

INSTANTIATE_TEST_SUITE_P(AllCodecs, CodecTest,
                         ::testing::Values(Compression::kNone, Compression::kGzip,
                                           Compression::kSnappy, Compression::kLz4,
                                           Compression::kZstd),
                         [](const auto& info) { return std::string(CompressionName(info.param)); });

TEST(CompressionTest, OutputFormatsAreTheKafkaOnes) {
  Bytes in = TextLike(1000, 1);
  Bytes gzip = *Compress(Compression::kGzip, in);
  EXPECT_EQ(Bytes(gzip.begin(), gzip.begin() + 2), (Bytes{0x1f, 0x8b}));
  Bytes snappy = *Compress(Compression::kSnappy, in);
  EXPECT_EQ(Bytes(snappy.begin(), snappy.begin() + 16),
            (Bytes{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}));
  Bytes lz4 = *Compress(Compression::kLz4, in);
  EXPECT_EQ(Bytes(lz4.begin(), lz4.begin() + 4), (Bytes{0x04, 0x22, 0x4d, 0x18}));
  EXPECT_EQ(lz4[4] & 0x20, 0x20) << "blocks must be independent for Java readers";
  Bytes zstd = *Compress(Compression::kZstd, in);
  EXPECT_EQ(Bytes(zstd.begin(), zstd.begin() + 4), (Bytes{0x28, 0xb5, 0x2f, 0xfd}));
}

TEST(CompressionTest, XerialSnappyHandBuilt) {
  Bytes a = TextLike(40000, 1), b = TextLike(123, 2);
  auto d = Decompress(Compression::kSnappy, Xerial({a, b}), kMiB);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, Cat(a, b));
  // Header only: an empty stream.
  auto e = Decompress(Compression::kSnappy, Xerial({}), kMiB);
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->empty());
}

TEST(CompressionTest, XerialSnappyBadFraming) {
  Bytes frame = Xerial({TextLike(1000, 1)});
  Bytes short_header(frame.begin(), frame.begin() + 12);
  EXPECT_EQ(Decompress(Compression::kSnappy, short_header, kMiB).error().code, Errc::kCorrupt);
  Bytes cut_len(frame.begin(), frame.begin() + 18);
  EXPECT_EQ(Decompress(Compression::kSnappy, cut_len, kMiB).error().code, Errc::kCorrupt);
  Bytes long_len = frame;
  StoreBE32(long_len.data() + 16, static_cast<uint32_t>(frame.size()));
  EXPECT_EQ(Decompress(Compression::kSnappy, long_len, kMiB).error().code, Errc::kCorrupt);
  Bytes neg_len = frame;
  StoreBE32(neg_len.data() + 16, 0xffffffffu);
  EXPECT_EQ(Decompress(Compression::kSnappy, neg_len, kMiB).error().code, Errc::kCorrupt);
}

TEST(CompressionTest, XerialSnappyBoundCountsAllChunks) {
  Bytes chunk(30000, 'x');
  Bytes frame = Xerial({chunk, chunk, chunk});
  EXPECT_EQ(Decompress(Compression::kSnappy, frame, 89999).error().code, Errc::kTooLarge);
  EXPECT_EQ(Decompress(Compression::kSnappy, frame, 90000)->size(), 90000u);
}

TEST(CompressionTest, RawSnappyAsLibrdkafkaWrites) {
  Bytes in = TextLike(70000, 9);
  auto d = Decompress(Compression::kSnappy, RawSnappy(in), kMiB);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, in);
  EXPECT_EQ(Decompress(Compression::kSnappy, RawSnappy(in), 69999).error().code, Errc::kTooLarge);
}

TEST(CompressionTest, GzipConcatenatedMembers) {
  Bytes a = TextLike(5000, 1), b = TextLike(7000, 2);
  Bytes both = Cat(*Compress(Compression::kGzip, a), *Compress(Compression::kGzip, b));
  auto d = Decompress(Compression::kGzip, both, kMiB);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, Cat(a, b));
  Bytes trailing = Cat(*Compress(Compression::kGzip, a), Bytes{1, 2, 3});
  EXPECT_EQ(Decompress(Compression::kGzip, trailing, kMiB).error().code, Errc::kCorrupt);
}

TEST(CompressionTest, ZstdFrameWithoutContentSize) {
  Bytes in = TextLike(200000, 4);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  Bytes out(ZSTD_compressBound(in.size()));
  size_t n = ZSTD_compress2(cctx, out.data(), out.size(), in.data(), in.size());
  ZSTD_freeCCtx(cctx);
  ASSERT_FALSE(ZSTD_isError(n));
  out.resize(n);
  ASSERT_EQ(ZSTD_getFrameContentSize(out.data(), out.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  auto d = Decompress(Compression::kZstd, out, kMiB);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, in);
  EXPECT_EQ(Decompress(Compression::kZstd, out, in.size() - 1).error().code, Errc::kTooLarge);
}

// A small frame claiming a 128 MiB window would make the decoder allocate
// it; the window is limited to max(8 MiB, max_output).
TEST(CompressionTest, ZstdWindowBoundedByLimit) {
  Bytes in = TextLike(100000, 5);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 27);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  Bytes out(ZSTD_compressBound(in.size()) + 64);
  ZSTD_outBuffer dst{out.data(), out.size(), 0};
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  ASSERT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx, &dst, &src, ZSTD_e_continue)));
  ZSTD_inBuffer none{nullptr, 0, 0};
  ASSERT_EQ(ZSTD_compressStream2(cctx, &dst, &none, ZSTD_e_end), 0u);
  ZSTD_freeCCtx(cctx);
  out.resize(dst.pos);
  // Frame header: no single-segment flag, window descriptor exponent 27-10.
  ASSERT_EQ(out[4] & 0x20, 0);
  ASSERT_EQ(out[5], (27 - 10) << 3);

  auto small = Decompress(Compression::kZstd, out, kMiB);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.error().code, Errc::kTooLarge);
  auto big = Decompress(Compression::kZstd, out, 128 * kMiB);
  ASSERT_TRUE(big.ok()) << big.error().message;
  EXPECT_EQ(*big, in);
}

// A declared content size beyond the limit fails before decoding.
TEST(CompressionTest, ZstdDeclaredSizeOverLimit) {
  Bytes zstd = *Compress(Compression::kZstd, Bytes(500000, 0));
  ASSERT_EQ(ZSTD_getFrameContentSize(zstd.data(), zstd.size()), 500000u);
  EXPECT_EQ(Decompress(Compression::kZstd, zstd, 499999).error().code, Errc::kTooLarge);
}

TEST(CompressionTest, ZstdConcatenatedFrames) {
  Bytes a = TextLike(3000, 1), b = TextLike(4000, 2);
  Bytes both = Cat(*Compress(Compression::kZstd, a), *Compress(Compression::kZstd, b));
  auto d = Decompress(Compression::kZstd, both, kMiB);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, Cat(a, b));
}

// Other writers set content size, checksums and linked blocks; all decode.
TEST(CompressionTest, Lz4FrameWithAllOptions) {
  Bytes in = TextLike(300000, 8);
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max256KB;
  prefs.frameInfo.blockMode = LZ4F_blockLinked;
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
  prefs.frameInfo.contentSize = in.size();
  Bytes out(LZ4F_compressFrameBound(in.size(), &prefs));
  size_t n = LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), &prefs);
  ASSERT_FALSE(LZ4F_isError(n));
  out.resize(n);
  auto d = Decompress(Compression::kLz4, out, kMiB);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, in);
  // Flip a byte inside the data: the block checksum catches it.
  out[out.size() / 2] ^= 0x40;
  EXPECT_EQ(Decompress(Compression::kLz4, out, kMiB).error().code, Errc::kCorrupt);
}

// liblz4 1.9.4 keeps an abandoned frame's remaining content size across
// LZ4F_resetDecompressionContext; the next frame must still decode.
TEST(CompressionTest, Lz4AbandonedFrameWithContentSize) {
  Bytes in = TextLike(50000, 2);
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.contentSize = in.size();
  Bytes sized(LZ4F_compressFrameBound(in.size(), &prefs));
  sized.resize(LZ4F_compressFrame(sized.data(), sized.size(), in.data(), in.size(), &prefs));
  Bytes cut(sized.begin(), sized.begin() + sized.size() / 2);
  EXPECT_EQ(Decompress(Compression::kLz4, cut, kMiB).error().code, Errc::kCorrupt);
  auto d = Decompress(Compression::kLz4, *Compress(Compression::kLz4, in), kMiB);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, in);
}

TEST(CompressionTest, UnknownCodec) {
  auto d = Decompress(static_cast<Compression>(5), Bytes{1}, 10);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, Errc::kCorrupt);
  EXPECT_FALSE(Compress(static_cast<Compression>(7), Bytes{1}).ok());
  EXPECT_STREQ(CompressionName(static_cast<Compression>(6)), "unknown");
}

TEST(CompressionTest, NoneIsBoundedToo) {
  Bytes in(100, 1);
  EXPECT_EQ(Decompress(Compression::kNone, in, 99).error().code, Errc::kTooLarge);
  EXPECT_EQ(*Decompress(Compression::kNone, in, 100), in);
}

}  // namespace
}  // namespace strata::protocol
