#pragma once
// Kafka's isolation levels (Fetch v4+, ListOffsets v2+): what a consumer
// may read of a partition with transactions.
#include <cstdint>

namespace strata::protocol {

inline constexpr int8_t kReadUncommitted = 0;  // up to the high watermark
inline constexpr int8_t kReadCommitted = 1;    // up to the last stable offset, aborts skipped

}  // namespace strata::protocol
