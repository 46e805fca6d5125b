#pragma once
// KIP-890's check of a transactional produce, as a log sees it (see
// Log::StartTxnVerification).
#include <cstdint>

namespace strata::storage {

// What StartTxnVerification found: whether the producer already has a
// transaction open here at that epoch (no need to ask the coordinator), and
// the guard a verified append must carry.
struct TxnVerification {
  bool ongoing = false;
  uint64_t guard = 0;
};

}  // namespace strata::storage
