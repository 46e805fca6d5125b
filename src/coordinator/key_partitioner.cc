#include "coordinator/key_partitioner.h"

namespace strata::coordinator {

namespace {

constexpr uint32_t kReplacement = 0xFFFD;

// Decodes one code point starting at s[i], advancing i. Overlong forms,
// surrogates and truncated sequences yield U+FFFD and consume one byte.
uint32_t NextCodePoint(std::string_view s, size_t& i) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t b0 = byte(i);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  int len = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    ++i;
    return kReplacement;
  }
  if (i + len > s.size()) {
    ++i;
    return kReplacement;
  }
  for (int k = 1; k < len; ++k) {
    uint8_t b = byte(i + k);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return kReplacement;
    }
    cp = cp << 6 | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return kReplacement;
  }
  i += len;
  return cp;
}

}  // namespace

int32_t JavaStringHashCode(std::string_view utf8) {
  uint32_t h = 0;  // unsigned arithmetic wraps exactly like Java's int
  size_t i = 0;
  while (i < utf8.size()) {
    uint32_t cp = NextCodePoint(utf8, i);
    if (cp >= 0x10000) {
      uint32_t v = cp - 0x10000;
      h = 31 * h + (0xD800 + (v >> 10));
      h = 31 * h + (0xDC00 + (v & 0x3FF));
    } else {
      h = 31 * h + cp;
    }
  }
  return static_cast<int32_t>(h);
}

int32_t PartitionForKey(std::string_view key, int32_t partitions) {
  int32_t h = JavaStringHashCode(key);
  int32_t abs = h == INT32_MIN ? 0 : (h < 0 ? -h : h);
  return abs % partitions;
}

}  // namespace strata::coordinator
