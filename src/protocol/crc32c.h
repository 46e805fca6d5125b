#pragma once
// CRC-32C (Castagnoli), the checksum of Kafka record batches v2. Uses the
// SSE4.2 crc32 instruction when the CPU has it, a table otherwise.
#include <cstddef>
#include <cstdint>

namespace strata::protocol {

// Extends `crc` (0 to start) over [data, data+n).
uint32_t Crc32c(const uint8_t* data, size_t n, uint32_t crc = 0);

// True when the hardware path is in use (reported at start-up).
bool Crc32cHardware();

}  // namespace strata::protocol
