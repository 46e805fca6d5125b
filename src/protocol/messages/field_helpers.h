#pragma once
// Serde helpers shared by the message definitions: fields whose nullability
// depends on the version, and content equality for RecordsField so message
// structs can default operator== (used by tests and by callers comparing
// decoded requests).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

// A string that is nullable only in some versions. In the others it uses the
// non-nullable encoding; an absent value is written as "" there (Kafka's own
// encoder would refuse it) and always decodes as a present string.
template <class IO>
void StrNullableIf(IO& io, std::optional<std::string>& s, bool nullable) {
  if (nullable) {
    io.nullable_str(s);
    return;
  }
  if constexpr (IO::kDecoding) {
    std::string t;
    io.str(t);
    s = std::move(t);
  } else {
    static const std::string kEmpty;
    io.str(s ? *s : kEmpty);
  }
}

// An array that is nullable only in some versions; same conventions as above
// (absent is written as an empty array where null is not allowed).
template <class IO, class T, class F>
void ArrayNullableIf(IO& io, std::optional<std::vector<T>>& a, bool nullable, F&& each) {
  if (nullable) {
    io.nullable_array(a, each);
    return;
  }
  if constexpr (IO::kDecoding) {
    a.emplace();
    io.array(*a, each);
  } else {
    std::vector<T> empty;
    io.array(a ? *a : empty, each);
  }
}

inline bool operator==(const RecordsField& a, const RecordsField& b) {
  return a.null == b.null && std::equal(a.view.begin(), a.view.end(), b.view.begin(), b.view.end());
}

// KIP-951's CurrentLeader of Produce (v10+) and Fetch (v12+) responses: the
// leader a NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH answer points to.
struct LeaderIdAndEpoch {
  int32_t leader_id = -1;
  int32_t leader_epoch = -1;
  template <class IO>
  void Serde(IO& io, int16_t) {
    io.i32(leader_id);
    io.i32(leader_epoch);
    io.tagged_fields();
  }
  bool operator==(const LeaderIdAndEpoch&) const = default;
};

}  // namespace strata::protocol
