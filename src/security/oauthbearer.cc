#include "security/oauthbearer.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace strata::security {

// Named so that a unity build of the module never merges these with
// another file's helpers.
namespace oauth_impl {
namespace {

constexpr char kSep = '\x01';  // RFC 7628's kvsep

Error Invalid(std::string message) { return MakeError(Errc::kInvalidArgument, std::move(message)); }

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string Seconds(int64_t ms) { return std::to_string(ms / 1000); }

// A NumericDate claim (RFC 7519 section 2: seconds since the epoch, possibly
// fractional) in ms; nullopt when absent.
Result<std::optional<int64_t>> NumericDateMs(const nlohmann::json& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end()) return std::optional<int64_t>();
  // Past 9e15 s (year 285 million) ms would overflow int64.
  double seconds = it->is_number() ? it->get<double>() : -1;
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 9e15) {
    return Invalid(std::string("the token's ") + name +
                   " claim is not a non-negative NumericDate (seconds since the epoch)");
  }
  return std::optional<int64_t>(static_cast<int64_t>(seconds * 1000));
}

// exp (required), nbf and iat, each with the allowed clock skew.
Status CheckTimes(const nlohmann::json& claims, const OAuthBearerValidation& v, int64_t now_ms,
                  ValidatedToken& token) {
  std::string now =
      "now " + Seconds(now_ms) + ", allowed clock skew " + Seconds(v.clock_skew_ms) + " s";
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> exp, NumericDateMs(claims, "exp"));
  if (!exp) return Invalid("the token has no exp claim");
  if (now_ms >= *exp + v.clock_skew_ms) {
    return Invalid("the token expired at " + Seconds(*exp) + " (" + now + ")");
  }
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> nbf, NumericDateMs(claims, "nbf"));
  if (nbf && now_ms + v.clock_skew_ms < *nbf) {
    return Invalid("the token is not valid before " + Seconds(*nbf) + " (nbf; " + now + ")");
  }
  STRATA_ASSIGN_OR_RETURN(std::optional<int64_t> iat, NumericDateMs(claims, "iat"));
  if (iat && now_ms + v.clock_skew_ms < *iat) {
    return Invalid("the token was issued in the future, at " + Seconds(*iat) + " (iat; " + now +
                   ")");
  }
  token.expiry_ms = *exp;
  token.issued_at_ms = iat;
  return Status::Ok();
}

std::string JoinQuoted(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "\"" : ", \"") + v + "\"";
  return "[" + out + "]";
}

Status CheckAudience(const nlohmann::json& claims, const std::vector<std::string>& expected) {
  if (expected.empty()) return Status::Ok();
  auto it = claims.find("aud");
  if (it == claims.end()) {
    return Invalid("the token has no aud claim; expected audience " + JoinQuoted(expected));
  }
  std::vector<std::string> audience;
  if (it->is_string()) audience.push_back(it->get<std::string>());
  if (it->is_array()) {
    for (const nlohmann::json& a : *it) {
      if (a.is_string()) audience.push_back(a.get<std::string>());
    }
  }
  for (const std::string& a : audience) {
    if (std::find(expected.begin(), expected.end(), a) != expected.end()) return Status::Ok();
  }
  return Invalid("the token's audience " + JoinQuoted(audience) +
                 " includes none of the expected audience " + JoinQuoted(expected));
}

Status CheckIssuer(const nlohmann::json& claims, const std::optional<std::string>& expected) {
  if (!expected) return Status::Ok();
  auto it = claims.find("iss");
  if (it == claims.end() || !it->is_string()) {
    return Invalid("the token has no iss claim; expected issuer \"" + *expected + "\"");
  }
  if (*it != *expected) {
    return Invalid("the token's issuer \"" + it->get<std::string>() +
                   "\" is not the expected issuer \"" + *expected + "\"");
  }
  return Status::Ok();
}

Result<std::string> Subject(const nlohmann::json& claims, const std::string& name) {
  auto it = claims.find(name);
  if (it == claims.end()) return Invalid("the token has no " + name + " claim (the principal)");
  std::string sub = it->is_string() ? Trim(it->get_ref<const std::string&>()) : "";
  if (sub.empty()) {
    return Invalid("the token's " + name + " claim must be a non-empty, non-blank string");
  }
  return sub;
}

// The scope claim as a set of scope names: a space-separated string (RFC 8693
// section 4.2) or an array of strings; absent means no scopes. Duplicates are
// refused, as Kafka's OAuthBearerUtils.validateClaimScopes refuses them.
Result<std::vector<std::string>> Scopes(const nlohmann::json& claims, const std::string& name) {
  auto it = claims.find(name);
  if (it == claims.end()) return std::vector<std::string>();
  std::vector<std::string> raw;
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    for (size_t b = s.find_first_not_of(' '); b != std::string::npos;
         b = s.find_first_not_of(' ', b)) {
      size_t e = std::min(s.find(' ', b), s.size());
      raw.push_back(s.substr(b, e - b));
      b = e;
    }
  } else if (it->is_array()) {
    for (const nlohmann::json& s : *it)
      raw.push_back(s.is_string() ? Trim(s.get<std::string>()) : "");
  } else {
    return Invalid("the token's " + name + " claim is neither a string nor an array");
  }
  std::set<std::string> seen;
  for (const std::string& s : raw) {
    if (s.empty())
      return Invalid("the token's " + name + " claim holds an empty or non-string scope");
    if (!seen.insert(s).second) {
      return Invalid("the token's " + name + " claim holds \"" + s + "\" twice");
    }
  }
  return raw;
}

Error BadMessage(const std::string& why) {
  return Invalid("Invalid OAUTHBEARER client first message: " + why);
}

// A saslname (RFC 5801 section 4): ',' and '=' are written =2C and =3D.
Result<std::string> DecodeSaslName(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\0') return BadMessage("the authzid holds a NUL");
    if (s[i] != '=') {
      out.push_back(s[i]);
      continue;
    }
    std::string_view escape = s.substr(i, 3);
    if (escape != "=2C" && escape != "=3D") return BadMessage("the authzid holds a bare '='");
    out.push_back(escape == "=2C" ? ',' : '=');
    i += 2;
  }
  if (out.empty()) return BadMessage("the authzid is empty");
  return out;
}

// Reads the GS2 header "n,[a=<authzid>]," and returns what follows it. "y"
// (the client could bind channels but thinks the server cannot) is accepted
// as "n", since this server binds none; "p" is refused (RFC 7628 section 3.1).
Result<std::string_view> ParseGs2Header(std::string_view msg, std::string& authzid) {
  if (!msg.starts_with("n,") && !msg.starts_with("y,")) {
    return BadMessage("it must start with the GS2 header \"n,\"");
  }
  msg.remove_prefix(2);
  size_t comma = msg.find(',');
  if (comma == std::string_view::npos) return BadMessage("the GS2 header does not end with ','");
  std::string_view field = msg.substr(0, comma);
  if (!field.empty()) {
    if (!field.starts_with("a=")) return BadMessage("the GS2 header holds an unknown field");
    STRATA_ASSIGN_OR_RETURN(authzid, DecodeSaslName(field.substr(2)));
  }
  return msg.substr(comma + 1);
}

bool ValidKey(std::string_view key) {  // 1*ALPHA
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
}

bool ValidValue(std::string_view value) {  // 1*(VCHAR / SP / HTAB / CR / LF)
  return !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= 0x21 && c <= 0x7e) || c == ' ' || c == '\t' || c == '\r' || c == '\n';
  });
}

// Reads 0x01 ("<key>=<value>" 0x01)* 0x01, the rest of the message.
Result<std::map<std::string, std::string>> ParseKvPairs(std::string_view rest) {
  if (rest.empty() || rest[0] != kSep) return BadMessage("no 0x01 follows the GS2 header");
  rest.remove_prefix(1);
  std::map<std::string, std::string> pairs;
  while (rest != std::string_view(&kSep, 1)) {
    size_t end = rest.find(kSep);
    if (end == std::string_view::npos) return BadMessage("it does not end with 0x01 0x01");
    if (end == 0) return BadMessage("data follows the closing 0x01 0x01");
    std::string_view pair = rest.substr(0, end);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos) return BadMessage("a key/value pair has no '='");
    std::string_view key = pair.substr(0, eq);
    if (!ValidKey(key)) return BadMessage("invalid key (keys are letters only)");
    if (!ValidValue(pair.substr(eq + 1))) {
      return BadMessage("invalid value for key \"" + std::string(key) + "\"");
    }
    if (!pairs.emplace(key, pair.substr(eq + 1)).second) {
      return BadMessage("key \"" + std::string(key) + "\" appears twice");
    }
    rest.remove_prefix(end + 1);
  }
  return pairs;
}

// The token of "Bearer <token>" (RFC 6750 section 2.1; scheme case-insensitive).
Result<std::string> BearerToken(std::string_view auth) {
  size_t space = auth.find(' ');
  if (space == std::string_view::npos) return BadMessage("invalid 'auth' format");
  std::string scheme(auth.substr(0, space));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; });
  if (scheme != "bearer") return BadMessage("invalid scheme, expected Bearer");
  std::string_view token = auth.substr(space);
  token.remove_prefix(std::min(token.find_first_not_of(' '), token.size()));
  bool ok = !token.empty() && std::all_of(token.begin(), token.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
  if (!ok) return BadMessage("invalid 'auth' format");
  return std::string(token);
}

// What a client is told of any invalid token: Kafka's jsonErrorResponse with
// OAuthBearerValidatorCallbackHandler's callback.error("invalid_token", null,
// null), so without "scope" or "openid-configuration".
constexpr std::string_view kInvalidTokenJson = R"({"status":"invalid_token"})";

// The OAUTHBEARER SaslServer; see MakeOAuthBearerServer.
class OAuthBearerServer final : public SaslServer {
 public:
  OAuthBearerServer(std::function<std::shared_ptr<const Jwks>()> current_keys,
                    OAuthBearerValidation validation, std::function<int64_t()> now_ms,
                    std::function<void(std::string_view)> on_unknown_kid)
      : current_keys_(std::move(current_keys)),
        validation_(std::move(validation)),
        now_ms_(std::move(now_ms)),
        on_unknown_kid_(std::move(on_unknown_kid)) {}

  Result<Bytes> Evaluate(ByteView client_token) override;
  bool complete() const override { return state_ == State::kComplete; }
  const std::string& user() const override { return user_; }
  std::optional<int64_t> credential_expiry_ms() const override { return expiry_ms_; }
  std::string failure_detail() const override { return detail_; }

 private:
  // kChallenged: the error challenge was sent; the client's 0x01 is due.
  enum class State { kStart, kChallenged, kComplete, kFailed };

  static Error Failed(const std::string& why) { return Invalid("Authentication failed: " + why); }

  Result<Bytes> EvaluateInitialResponse(ByteView client_token);
  Result<Bytes> EvaluateChallengeAnswer(ByteView client_token);
  Result<ValidatedToken> Validate(const std::string& compact);

  const std::function<std::shared_ptr<const Jwks>()> current_keys_;
  const OAuthBearerValidation validation_;
  const std::function<int64_t()> now_ms_;
  const std::function<void(std::string_view)> on_unknown_kid_;
  State state_ = State::kStart;
  std::string user_;
  std::optional<int64_t> expiry_ms_;
  std::string detail_;  // why the token was refused, for the broker's log
};

Result<Bytes> OAuthBearerServer::Evaluate(ByteView client_token) {
  switch (state_) {
    case State::kStart:
      return EvaluateInitialResponse(client_token);
    case State::kChallenged:
      return EvaluateChallengeAnswer(client_token);
    case State::kComplete:
      return Failed("the OAUTHBEARER exchange is already complete");
    case State::kFailed:
      break;
  }
  return Failed("the OAUTHBEARER exchange has already failed");
}

Result<Bytes> OAuthBearerServer::EvaluateInitialResponse(ByteView client_token) {
  state_ = State::kFailed;  // until the token passes
  auto msg = ParseOAuthBearerInitialResponse(client_token);
  if (!msg.ok()) return Failed(msg.error().message);
  auto token = Validate(msg->token);
  if (!token.ok()) {
    detail_ = token.error().message;
    state_ = State::kChallenged;
    return Bytes(kInvalidTokenJson.begin(), kInvalidTokenJson.end());
  }
  // An authzid is allowed, as SASL has it, but must name the token's principal.
  if (!msg->authzid.empty() && msg->authzid != token->principal) {
    return Failed("Client requested an authorization id (" + msg->authzid +
                  ") that is different from the token's principal name (" + token->principal + ")");
  }
  user_ = token->principal;
  expiry_ms_ = token->expiry_ms;
  state_ = State::kComplete;
  return Bytes{};
}

// RFC 7628 section 3.2.2: after the error challenge the client sends a lone
// 0x01 and the server fails the exchange; Kafka fails it with the challenge's
// JSON as the message the client reports.
Result<Bytes> OAuthBearerServer::EvaluateChallengeAnswer(ByteView client_token) {
  state_ = State::kFailed;
  if (client_token.size() == 1 && client_token[0] == static_cast<uint8_t>(kSep)) {
    return Invalid(std::string(kInvalidTokenJson));
  }
  return Failed("the client answered the error challenge " + std::string(kInvalidTokenJson) +
                " with something other than 0x01");
}

Result<ValidatedToken> OAuthBearerServer::Validate(const std::string& compact) {
  std::shared_ptr<const Jwks> keys = current_keys_();
  if (keys == nullptr) return Invalid("no JWKS is loaded to validate the token with");
  STRATA_ASSIGN_OR_RETURN(Jwt jwt, ParseJwt(compact));
  auto token = ValidateToken(jwt, *keys, validation_, now_ms_());
  // Jwks::Verify's kNotFound: the kid is one the keys held lack, perhaps
  // because the provider rotated them (Kafka's maybeExpediteRefresh).
  auto kid = jwt.header.find("kid");
  if (!token.ok() && token.error().code == Errc::kNotFound && on_unknown_kid_ &&
      kid != jwt.header.end() && kid->is_string()) {
    on_unknown_kid_(kid->get_ref<const std::string&>());
  }
  return token;
}

}  // namespace
}  // namespace oauth_impl

Result<ValidatedToken> ValidateToken(std::string_view compact, const Jwks& keys,
                                     const OAuthBearerValidation& validation, int64_t now_ms) {
  STRATA_ASSIGN_OR_RETURN(Jwt jwt, ParseJwt(compact));
  return ValidateToken(jwt, keys, validation, now_ms);
}

Result<ValidatedToken> ValidateToken(const Jwt& jwt, const Jwks& keys,
                                     const OAuthBearerValidation& validation, int64_t now_ms) {
  STRATA_RETURN_IF_ERROR(keys.Verify(jwt));
  ValidatedToken token;
  STRATA_RETURN_IF_ERROR(oauth_impl::CheckTimes(jwt.claims, validation, now_ms, token));
  STRATA_RETURN_IF_ERROR(oauth_impl::CheckIssuer(jwt.claims, validation.expected_issuer));
  STRATA_RETURN_IF_ERROR(oauth_impl::CheckAudience(jwt.claims, validation.expected_audience));
  STRATA_ASSIGN_OR_RETURN(token.principal,
                          oauth_impl::Subject(jwt.claims, validation.sub_claim_name));
  STRATA_ASSIGN_OR_RETURN(token.scopes,
                          oauth_impl::Scopes(jwt.claims, validation.scope_claim_name));
  return token;
}

Result<OAuthBearerInitialResponse> ParseOAuthBearerInitialResponse(ByteView message) {
  std::string_view msg(reinterpret_cast<const char*>(message.data()), message.size());
  OAuthBearerInitialResponse out;
  STRATA_ASSIGN_OR_RETURN(std::string_view rest, oauth_impl::ParseGs2Header(msg, out.authzid));
  STRATA_ASSIGN_OR_RETURN(out.extensions, oauth_impl::ParseKvPairs(rest));
  auto auth = out.extensions.find("auth");
  if (auth == out.extensions.end()) return oauth_impl::BadMessage("'auth' not specified");
  STRATA_ASSIGN_OR_RETURN(out.token, oauth_impl::BearerToken(auth->second));
  out.extensions.erase(auth);
  return out;
}

std::unique_ptr<SaslServer> MakeOAuthBearerServer(
    std::function<std::shared_ptr<const Jwks>()> current_keys, OAuthBearerValidation validation,
    std::function<int64_t()> now_ms, std::function<void(std::string_view kid)> on_unknown_kid) {
  return std::make_unique<oauth_impl::OAuthBearerServer>(
      std::move(current_keys), std::move(validation), std::move(now_ms), std::move(on_unknown_kid));
}

Bytes OAuthBearerClientToken(std::string_view token, std::string_view authzid) {
  std::string msg = "n,";
  if (!authzid.empty()) msg += "a=";
  for (char c : authzid) {
    msg += c == ',' ? "=2C" : c == '=' ? "=3D" : std::string(1, c);
  }
  msg += ",";
  msg += oauth_impl::kSep;
  msg += "auth=Bearer ";
  msg += token;
  msg += oauth_impl::kSep;
  msg += oauth_impl::kSep;
  return Bytes(msg.begin(), msg.end());
}

}  // namespace strata::security
