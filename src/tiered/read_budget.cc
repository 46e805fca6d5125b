#include "tiered/read_budget.h"

namespace strata::tiered {

bool ReadBudget::TryAcquire(uint64_t bytes) {
  uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (used + bytes > capacity_) return false;
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_acq_rel));
  return true;
}

void ReadBudget::Release(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_acq_rel); }

}  // namespace strata::tiered
