#pragma once
// ReadBudget: the bound on bytes of remote reads in flight at once
// (strata.remote.fetch.max.bytes), so many consumers catching up on old data
// cannot make a broker hold unbounded memory in reads. A fetch reserves what
// its remote partitions may return before it starts them and releases it when
// they have answered; a fetch that finds the budget spent waits (off the
// network thread) for the others to finish. One fetch asking for more than
// the whole bound gets the whole bound and runs alone. Thread-safe.
#include <atomic>
#include <cstdint>

namespace strata::tiered {

class ReadBudget {
 public:
  explicit ReadBudget(uint64_t capacity) : capacity_(capacity) {}

  // What a fetch wanting `bytes` reserves: capped at the capacity.
  uint64_t Grant(uint64_t bytes) const { return bytes < capacity_ ? bytes : capacity_; }
  // Takes `bytes` (a Grant) if that much is free now.
  bool TryAcquire(uint64_t bytes);
  void Release(uint64_t bytes);

  uint64_t in_use() const { return used_.load(std::memory_order_relaxed); }
  uint64_t capacity() const { return capacity_; }
  uint64_t waits() const { return waits_.load(std::memory_order_relaxed); }
  void CountWait() { waits_.fetch_add(1, std::memory_order_relaxed); }

 private:
  const uint64_t capacity_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> waits_{0};
};

}  // namespace strata::tiered
