// libFuzzer target: the input is a request frame body (what follows the
// 4-byte size prefix): request header (api key, version, correlation id,
// client id, tagged fields when flexible) and then the request body.
// Checks that decoding never crashes, hangs or over-allocates, and that a
// successfully decoded request re-encodes to a fixed point
// (encode(decode(encode(m))) == encode(m)).
#include <cstddef>
#include <cstdint>

#include "base/bytes.h"
#include "protocol/all_requests.h"
#include "protocol/header.h"
#include "protocol/message.h"
#include "protocol/request_registry.h"

namespace strata::protocol {
namespace {

// Decodes as M; if that works, encode -> decode -> encode must be stable.
template <class M>
void RoundTrip(int16_t version, MutableByteView body) {
  if (version < M::kMinVersion || version > M::kMaxVersion) return;
  const bool flex = IsFlexible<M>(version);
  auto first = Decode<M>(body, version, flex);
  if (!first.ok()) return;
  Bytes once;
  Encode(*first, version, flex, once);
  Bytes copy = once;
  auto second = Decode<M>(MutableByteView(copy), version, flex);
  if (!second.ok()) __builtin_trap();  // our own encoding must decode
  Bytes twice;
  Encode(*second, version, flex, twice);
  if (twice != once) __builtin_trap();
}

template <class... Ms>
void RoundTripAny(RequestList<Ms...>, int16_t key, int16_t version, MutableByteView body) {
  (void)((key == Ms::kApiKey ? (RoundTrip<Ms>(version, body), true) : false) || ...);
}

}  // namespace
}  // namespace strata::protocol

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  using namespace strata::protocol;
  if (size < 4) return 0;
  // A mutable copy: decoded records fields may point into (and be rewritten in) the buffer.
  Bytes frame(data, data + size);
  const auto key = static_cast<int16_t>(LoadBE16(frame.data()));
  const auto version = static_cast<int16_t>(LoadBE16(frame.data() + 2));
  WireReader reader(MutableByteView(frame), RequestIsFlexible(key, version));
  RequestHeader header;
  ReadRequestHeader(reader, header);
  if (!reader.ok()) return 0;
  MutableByteView body = MutableByteView(frame).subspan(reader.position());
  Status st = DecodeRequestBody(key, version, body);
  if (st.ok()) {
    Bytes copy(body.begin(), body.end());
    RoundTripAny(AllRequests{}, key, version, MutableByteView(copy));
  }
  return 0;
}
