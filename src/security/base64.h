#pragma once
// Standard base64 (RFC 4648 section 4, '+' '/' and '=' padding), as SCRAM
// writes salts, nonces, proofs and signatures (RFC 5802) and as Kafka's SCRAM
// credential strings hold salt, stored key and server key. The decoder is
// strict: whole 4-character groups, padding only at the end, nothing outside
// the alphabet (no white space), so that a malformed SCRAM message is refused
// rather than half-read. (JWTs use base64url.h.)
#include <optional>
#include <string>
#include <string_view>

#include "base/bytes.h"

namespace strata::security {

std::string Base64Encode(ByteView data);
// nullopt when `text` is not canonical-length padded base64.
std::optional<Bytes> Base64Decode(std::string_view text);

}  // namespace strata::security
