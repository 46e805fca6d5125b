#pragma once
// Base64url (RFC 4648 section 5) without padding, as JOSE uses it for every
// JWT segment and every JWK number (RFC 7515 section 2). Strict: padding,
// characters outside the URL-safe alphabet, an impossible length (4n+1) and
// non-zero bits left over in the last character are all refused, so that one
// token has exactly one encoding.
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"

namespace strata::security {

std::string Base64UrlEncode(ByteView data);
Result<Bytes> Base64UrlDecode(std::string_view text);

}  // namespace strata::security
