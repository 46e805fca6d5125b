#pragma once
// Offset: the position of a record in a partition's log (Kafka's offset), a
// type of its own so that an offset is never passed where a count, a byte
// position or an epoch is expected. Unlike the ids in ids.h it has the
// arithmetic logs need: an offset plus a count of records is an offset, the
// distance between two offsets is a count. -1 is Kafka's "none". The integer
// appears only at the edges (wire, files, JSON) through value().
#include <fmt/format.h>

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>

namespace strata {

class Offset {
 public:
  constexpr Offset() = default;
  constexpr explicit Offset(int64_t v) : v_(v) {}
  constexpr int64_t value() const { return v_; }
  constexpr auto operator<=>(const Offset&) const = default;

  constexpr Offset operator+(int64_t n) const { return Offset(v_ + n); }
  constexpr Offset operator-(int64_t n) const { return Offset(v_ - n); }
  constexpr int64_t operator-(Offset o) const { return v_ - o.v_; }
  constexpr Offset& operator+=(int64_t n) {
    v_ += n;
    return *this;
  }
  constexpr Offset& operator-=(int64_t n) {
    v_ -= n;
    return *this;
  }
  constexpr Offset& operator++() {
    ++v_;
    return *this;
  }
  static constexpr Offset Max() { return Offset(std::numeric_limits<int64_t>::max()); }

 private:
  int64_t v_ = 0;
};

inline constexpr Offset kNoOffset{-1};

// For test failure messages.
inline std::ostream& operator<<(std::ostream& os, Offset o) { return os << o.value(); }

// 42_o: an offset literal, for tests and constants.
constexpr Offset operator""_o(unsigned long long v) { return Offset(static_cast<int64_t>(v)); }

}  // namespace strata

template <>
struct std::hash<strata::Offset> {
  size_t operator()(const strata::Offset& o) const { return std::hash<int64_t>()(o.value()); }
};

template <>
struct fmt::formatter<strata::Offset> : fmt::formatter<int64_t> {
  auto format(const strata::Offset& o, fmt::format_context& ctx) const {
    return fmt::formatter<int64_t>::format(o.value(), ctx);
  }
};
