#pragma once
// CRC-32C (Castagnoli), the checksum of Kafka record batches v2. Computed by
// Intel ISA-L's crc32_iscsi, which picks the fastest kernel for the CPU at run
// time (PCLMULQDQ/VPCLMULQDQ folding; ~6x a single stream of SSE4.2 crc32).
#include <cstddef>
#include <cstdint>

namespace strata::protocol {

// Extends `crc` (0 to start) over [data, data+n): Crc32c(b, Crc32c(a)) == Crc32c(a+b).
uint32_t Crc32c(const uint8_t* data, size_t n, uint32_t crc = 0);

}  // namespace strata::protocol
