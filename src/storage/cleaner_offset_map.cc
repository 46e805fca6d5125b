#include "storage/cleaner_offset_map.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "base/check.h"

namespace strata::storage {

namespace {

constexpr uint64_t kMulA = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kMulB = 0xc2b2ae3d27d4eb4fULL;
constexpr uint64_t kMulC = 0x165667b19e3779f9ULL;
constexpr uint64_t kMulD = 0xd6e8feb86659fd93ULL;

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// A bijective avalanche step (xor-shift / multiply rounds).
inline uint64_t Avalanche(uint64_t x) {
  x ^= x >> 32;
  x *= kMulD;
  x ^= x >> 29;
  x *= kMulB;
  x ^= x >> 32;
  return x;
}

bool IsPrime(size_t n) {
  if (n < 2) return false;
  for (size_t d = 2; d * d <= n; ++d) {
    if (n % d == 0) return false;
  }
  return true;
}

// Double hashing visits every slot only when the table size is prime.
size_t PrimeAtMost(size_t n) {
  while (n > 2 && !IsPrime(n)) --n;
  return std::max<size_t>(n, 2);
}

uint64_t RandomSeed() {
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen();
}

}  // namespace

OffsetMap::OffsetMap(size_t memory_bytes, double load_factor)
    : slots_(PrimeAtMost(std::max<size_t>(memory_bytes / kSlotBytes, 2))) {
  double limit = std::clamp(load_factor, 0.01, 0.95) * double(slots_);
  // Always leave an empty slot so that probing terminates.
  max_entries_ = std::clamp<size_t>(size_t(limit), 1, slots_ - 1);
  seed_[0] = RandomSeed();
  seed_[1] = RandomSeed();
}

void OffsetMap::Allocate() { table_.assign(slots_, Slot{0, 0, kNoOffset}); }

OffsetMap::Hash OffsetMap::HashKey(ByteView key) const {
  uint64_t a = seed_[0] ^ (uint64_t(key.size()) * kMulA);
  uint64_t b = seed_[1] ^ (uint64_t(key.size()) * kMulC);
  size_t i = 0;
  for (; i + 8 <= key.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, key.data() + i, 8);
    a = Rotl(a ^ (w * kMulB), 29) * kMulA;
    b = Rotl(b ^ (w * kMulD), 31) * kMulC;
  }
  if (i < key.size()) {
    uint64_t w = 0;
    std::memcpy(&w, key.data() + i, key.size() - i);
    a = Rotl(a ^ (w * kMulB), 29) * kMulA;
    b = Rotl(b ^ (w * kMulD), 31) * kMulC;
  }
  a = Avalanche(a + Rotl(b, 17));
  b = Avalanche(b ^ a);
  return Hash{a, b};
}

size_t OffsetMap::Find(const Hash& h) const {
  size_t idx = size_t(h.h1 % slots_);
  const size_t step = 1 + size_t(h.h2 % (slots_ - 1));
  for (;;) {
    const Slot& s = table_[idx];
    if (s.offset == kNoOffset || (s.h1 == h.h1 && s.h2 == h.h2)) return idx;
    idx += step;
    if (idx >= slots_) idx -= slots_;
  }
}

bool OffsetMap::Put(ByteView key, Offset offset) {
  STRATA_CHECK(offset >= 0_o, "negative offset {} in the offset map", offset);
  if (table_.empty()) Allocate();
  Hash h = HashKey(key);
  Slot& s = table_[Find(h)];
  if (s.offset == kNoOffset) {
    if (size_ >= max_entries_) return false;
    s.h1 = h.h1;
    s.h2 = h.h2;
    ++size_;
  }
  s.offset = offset;
  UpdateLatestOffset(offset);
  return true;
}

Offset OffsetMap::Get(ByteView key) const {
  if (table_.empty()) return kNoOffset;
  return table_[Find(HashKey(key))].offset;
}

void OffsetMap::Clear() {
  if (!table_.empty() && size_ > 0) std::fill(table_.begin(), table_.end(), Slot{0, 0, kNoOffset});
  size_ = 0;
  latest_offset_ = kNoOffset;
  seed_[0] = RandomSeed();
  seed_[1] = RandomSeed();
}

}  // namespace strata::storage
