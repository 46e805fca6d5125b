#pragma once
// StrongId: an integer with a type of its own, so a node id cannot be passed
// where a leader epoch is expected (the compiler says no). Ordered, hashable,
// printable with fmt; value() gives the integer at the edges (wire, JSON).
#include <fmt/format.h>

#include <compare>
#include <cstdint>
#include <functional>

namespace strata {

template <typename Tag, typename T>
class StrongId {
 public:
  using ValueType = T;
  constexpr StrongId() = default;
  constexpr explicit StrongId(T v) : v_(v) {}
  constexpr T value() const { return v_; }
  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  T v_{};
};

}  // namespace strata

template <typename Tag, typename T>
struct std::hash<strata::StrongId<Tag, T>> {
  size_t operator()(const strata::StrongId<Tag, T>& id) const { return std::hash<T>()(id.value()); }
};

template <typename Tag, typename T>
struct fmt::formatter<strata::StrongId<Tag, T>> : fmt::formatter<T> {
  auto format(const strata::StrongId<Tag, T>& id, fmt::format_context& ctx) const {
    return fmt::formatter<T>::format(id.value(), ctx);
  }
};
