#pragma once
// OffsetMap: the cleaner's dedupe buffer, record key -> latest offset, in a
// fixed amount of memory (log.cleaner.dedupe.buffer.size / threads), like
// Kafka's SkimpyOffsetMap. Keys are not stored: each is reduced to a 128-bit
// hash keyed with a per-pass random seed, so a collision (which would drop a
// live record) is astronomically unlikely and cannot be engineered by a
// producer. Slots (hash, offset) live in an open-addressing table of prime
// size probed by double hashing; the table is allocated on first use.
//
// Thread-safety: none; each cleaner thread owns one map.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "base/offset.h"

namespace strata::storage {

class OffsetMap {
 public:
  static constexpr size_t kSlotBytes = 24;
  // Kafka's log.cleaner.io.buffer.load.factor default.
  static constexpr double kDefaultLoadFactor = 0.9;

  // At least 2 slots whatever `memory_bytes` says.
  explicit OffsetMap(size_t memory_bytes, double load_factor = kDefaultLoadFactor);

  // Records `offset` as the latest for `key` and as the map's latest offset.
  // False (nothing recorded) when `key` is new and the map already holds
  // max_entries() keys.
  bool Put(ByteView key, Offset offset);
  // The offset recorded for `key`, or kNoOffset.
  Offset Get(ByteView key) const;
  // Empties the map and draws a new hash seed.
  void Clear();

  // Raises the latest offset (a whole batch or segment was mapped).
  void UpdateLatestOffset(Offset offset) {
    if (offset > latest_offset_) latest_offset_ = offset;
  }
  Offset latest_offset() const { return latest_offset_; }
  size_t size() const { return size_; }
  size_t slots() const { return slots_; }
  size_t max_entries() const { return max_entries_; }
  double utilization() const { return slots_ == 0 ? 0.0 : double(size_) / double(slots_); }

 private:
  struct Slot {
    uint64_t h1;
    uint64_t h2;
    Offset offset;  // kNoOffset: empty
  };
  struct Hash {
    uint64_t h1;
    uint64_t h2;
  };

  Hash HashKey(ByteView key) const;
  // The slot holding `h`, or the empty slot where it would go.
  size_t Find(const Hash& h) const;
  void Allocate();

  size_t slots_;
  size_t max_entries_;
  std::vector<Slot> table_;  // empty until first use
  size_t size_ = 0;
  Offset latest_offset_ = kNoOffset;
  uint64_t seed_[2] = {0, 0};
};

}  // namespace strata::storage
