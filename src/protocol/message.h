#pragma once
// Decode/encode helpers over the Serde definitions in protocol/messages/.
#include <string>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/wire.h"

namespace strata::protocol {

// True when `version` of message type M uses the flexible encoding.
template <class M>
constexpr bool IsFlexible(int16_t version) {
  return M::kFirstFlexible >= 0 && version >= M::kFirstFlexible;
}

// Decodes a message body; `data` must outlive the message when it has
// RecordsField members (they point into it). Trailing bytes are allowed
// (newer clients may append fields we do not know).
template <class M>
Result<M> Decode(MutableByteView data, int16_t version, bool flexible) {
  M m;
  WireReader r(data, flexible);
  m.Serde(r, version);
  if (!r.ok()) return MakeError(Errc::kCorrupt, r.error());
  return m;
}

template <class M>
void Encode(M& m, int16_t version, bool flexible, Bytes& out) {
  WireWriter w(out, flexible);
  m.Serde(w, version);
}

}  // namespace strata::protocol
