#pragma once
// JSON Web Tokens signed with public keys (RFC 7515 JWS compact form, RFC 7519
// JWT) and the JSON Web Key Sets that verify them (RFC 7517/7518): the
// cryptographic half of the broker's OAUTHBEARER validation, as jose4j does it
// for Kafka's BrokerJwtValidator. Claims (exp, aud, ...) are checked by
// ValidateToken in oauthbearer.h, not here.
//
// Thread-safety: a Jwks is immutable once parsed; Verify may run on any number
// of threads at once (each call makes its own OpenSSL contexts).
#include <openssl/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace strata::security {

// A JWS in compact form, split and decoded but not yet verified.
struct Jwt {
  nlohmann::json header;      // the JOSE header (alg, kid, ...), always an object
  nlohmann::json claims;      // the payload, always an object
  std::string signing_input;  // "<header b64>.<payload b64>", what the signature covers
  Bytes signature;            // decoded; empty for an unsigned ("alg":"none") token
};

// The longest compact token accepted: real access tokens are a few KiB, and
// the bound keeps a hostile client from making the broker decode megabytes.
inline constexpr size_t kMaxJwtBytes = 64 * 1024;

// Splits and decodes "<header>.<payload>.<signature>" (base64url without
// padding); header and payload must be JSON objects. Errors are
// kInvalidArgument with a message saying which part is wrong.
Result<Jwt> ParseJwt(std::string_view compact);

// Frees an OpenSSL EVP_PKEY.
struct EvpPkeyDeleter {
  void operator()(EVP_PKEY* key) const;
};
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyDeleter>;

// A JSON Web Key Set: the public keys an identity provider signs tokens with.
// Holds RSA keys (n, e; at least 2048 bits) and EC keys (P-256, P-384, P-521;
// x, y). Keys of other types (oct, OKP) and keys whose "use" is not "sig" are
// skipped; a malformed RSA or EC key fails the whole set, so that a broken
// endpoint is noticed rather than half-used.
class Jwks {
 public:
  // One verification key of the set.
  struct Key {
    std::string kid;  // empty when the JWK has none
    std::string kty;  // "RSA" or "EC"
    std::string crv;  // EC only: "P-256", "P-384" or "P-521"
    std::string alg;  // the JWK's optional "alg"; empty = any alg that fits the key
    EvpPkeyPtr pkey;
  };

  // Parses {"keys":[...]}. Errors are kInvalidArgument.
  static Result<Jwks> Parse(std::string_view json);

  // Checks the token's signature: alg RS256/384/512, PS256/384/512 or
  // ES256/384/512 ("none" and the shared-secret HS* are refused), with the key
  // named by the header's kid, or the set's only key when there is no kid.
  // kInvalidArgument when the token is not signed by a key of this set;
  // kNotFound when its kid names no key of the set (the provider may have
  // rotated its keys since the set was fetched).
  Status Verify(const Jwt& jwt) const;

  const std::vector<Key>& keys() const { return keys_; }

 private:
  Result<const Key*> FindKey(const Jwt& jwt) const;

  std::vector<Key> keys_;
};

}  // namespace strata::security
