#pragma once
// SASL/OAUTHBEARER on the broker (RFC 7628; KIP-255, KIP-768): the client
// sends a JWT access token from its identity provider, the broker checks its
// signature against the provider's JWKS and its claims against the listener's
// settings, and the token's subject becomes the principal. This is what
// Kafka's OAuthBearerSaslServer does with OAuthBearerValidatorCallbackHandler
// (BrokerJwtValidator); the keys come from a JwksSource (jwks_source.h).
//
// Thread-safety: ValidateToken is a pure function; one OAUTHBEARER SaslServer
// belongs to one connection (see sasl_server.h).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "security/jwt.h"
#include "security/sasl_server.h"

namespace strata::security {

// What a token's claims must satisfy, from the listener's sasl.oauthbearer.*
// settings.
struct OAuthBearerValidation {
  // sasl.oauthbearer.expected.audience: when not empty, the token's aud (a
  // string or an array) must name at least one of these.
  std::vector<std::string> expected_audience;
  // sasl.oauthbearer.expected.issuer: when set, iss must equal it.
  std::optional<std::string> expected_issuer;
  std::string sub_claim_name = "sub";      // sasl.oauthbearer.sub.claim.name
  std::string scope_claim_name = "scope";  // sasl.oauthbearer.scope.claim.name
  // sasl.oauthbearer.clock.skew.seconds (default 30), in ms: the leeway
  // given to exp, nbf and iat for clocks that disagree.
  int64_t clock_skew_ms = 30000;
};

// A token that passed every check.
struct ValidatedToken {
  std::string principal;                // the sub claim (or sub_claim_name's), trimmed
  int64_t expiry_ms = 0;                // exp, ms since the epoch
  std::optional<int64_t> issued_at_ms;  // iat, when present
  std::vector<std::string> scopes;      // the scope claim: a space-separated string or an array
};

// Verifies `compact` (a JWS) with `keys` and checks its claims at `now_ms`:
// exp required and not past, nbf and iat not in the future (each with the
// clock skew), aud and iss as configured, the subject claim a non-empty
// string, scopes without duplicates. kInvalidArgument with a message naming
// the first failed check (expired, invalid signature, audience, ...), or
// kNotFound when the token's kid names no key of `keys` (Jwks::Verify).
Result<ValidatedToken> ValidateToken(std::string_view compact, const Jwks& keys,
                                     const OAuthBearerValidation& validation, int64_t now_ms);
// The same for a token already split by ParseJwt.
Result<ValidatedToken> ValidateToken(const Jwt& jwt, const Jwks& keys,
                                     const OAuthBearerValidation& validation, int64_t now_ms);

// The parts of an OAUTHBEARER client initial response (RFC 7628 section 3.1):
//   "n,[a=<authzid>]," 0x01 ("<key>=<value>" 0x01)* 0x01
// with a required "auth=Bearer <token>" pair.
struct OAuthBearerInitialResponse {
  std::string authzid;  // decoded (=2C and =3D); empty when absent
  std::string token;
  std::map<std::string, std::string> extensions;  // every pair but auth (KIP-342)
};
Result<OAuthBearerInitialResponse> ParseOAuthBearerInitialResponse(ByteView message);

// The broker side of one OAUTHBEARER exchange. The first Evaluate carries the
// whole client initial response; a valid token completes the exchange with
// an empty reply, user() is the token's principal and credential_expiry_ms()
// its exp (KIP-368 re-authentication, session lifetime).
//
// A token that fails validation (expired, invalid signature, audience, no
// JWKS loaded, ...) is answered as Kafka's OAuthBearerSaslServer answers it,
// following RFC 7628 section 3.2.2: the reply is the error challenge
// {"status":"invalid_token"}, the client answers it with a single 0x01, and
// that Evaluate fails with kInvalidArgument and the same JSON as message. The
// reason is not told to an unauthenticated client; failure_detail() holds it
// for the broker's log. Any other answer to the challenge fails too. A
// malformed initial response and an authzid other than the principal fail
// the first Evaluate at once ("Authentication failed: ..."), as in Kafka.
// Extensions are accepted and ignored, as OAuthBearerValidatorCallbackHandler
// accepts them all.
//
// `current_keys` is asked for the JWKS on each exchange (a JwksSource's
// Current()); it may return null when none is loaded, which fails the token.
// `on_unknown_kid`, when set, is told the kid of a token signed with a key
// the JWKS lacks, so that the source can fetch the provider's rotated keys
// early (JwksSource::RequestRefresh); that token still fails.
std::unique_ptr<SaslServer> MakeOAuthBearerServer(
    std::function<std::shared_ptr<const Jwks>()> current_keys, OAuthBearerValidation validation,
    std::function<int64_t()> now_ms,
    std::function<void(std::string_view kid)> on_unknown_kid = {});

// The client initial response carrying `token` (and `authzid` when not
// empty), as Kafka's OAuthBearerClientInitialResponse.toBytes() writes it.
Bytes OAuthBearerClientToken(std::string_view token, std::string_view authzid = {});

}  // namespace strata::security
