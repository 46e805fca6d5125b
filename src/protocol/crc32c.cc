#include "protocol/crc32c.h"

#include <array>
#include <cstring>

namespace strata::protocol {

namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

// Slicing-by-8 tables for the software path.
struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
    }
  }
};

const Tables& SoftTables() {
  static const Tables tables;
  return tables;
}

uint32_t SoftwareCrc(const uint8_t* p, size_t n, uint32_t crc) {
  const auto& t = SoftTables().t;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    w ^= crc;
    crc = t[7][w & 0xff] ^ t[6][(w >> 8) & 0xff] ^ t[5][(w >> 16) & 0xff] ^ t[4][(w >> 24) & 0xff] ^
          t[3][(w >> 32) & 0xff] ^ t[2][(w >> 40) & 0xff] ^ t[1][(w >> 48) & 0xff] ^ t[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t HardwareCrc(const uint8_t* p, size_t n, uint32_t crc) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c = __builtin_ia32_crc32di(c, w);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}
bool DetectHardware() { return __builtin_cpu_supports("sse4.2"); }
#else
uint32_t HardwareCrc(const uint8_t* p, size_t n, uint32_t crc) { return SoftwareCrc(p, n, crc); }
bool DetectHardware() { return false; }
#endif

const bool g_hardware = DetectHardware();

}  // namespace

uint32_t Crc32c(const uint8_t* data, size_t n, uint32_t crc) {
  crc = ~crc;
  crc = g_hardware ? HardwareCrc(data, n, crc) : SoftwareCrc(data, n, crc);
  return ~crc;
}

bool Crc32cHardware() { return g_hardware; }

}  // namespace strata::protocol
