#include "protocol/crc32c.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <climits>

namespace strata::protocol {

uint32_t Crc32c(const uint8_t* data, size_t n, uint32_t crc) {
  // ISA-L takes the register value (pre-inverted) and an int length; Kafka's
  // CRC inverts before and after, so chaining passes ~crc back in.
  uint32_t reg = ~crc;
  while (n > 0) {
    int len = static_cast<int>(std::min<size_t>(n, INT_MAX));
    reg = crc32_iscsi(const_cast<uint8_t*>(data), len, reg);
    data += len;
    n -= static_cast<size_t>(len);
  }
  return ~reg;
}

}  // namespace strata::protocol
