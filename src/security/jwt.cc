#include "security/jwt.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include "security/base64url.h"

namespace strata::security {

// Named so that a unity build of the module never merges these with
// another file's helpers.
namespace jwt_impl {
namespace {

struct BnDeleter {
  void operator()(BIGNUM* bn) const { BN_free(bn); }
};
using BnPtr = std::unique_ptr<BIGNUM, BnDeleter>;
struct ParamBldDeleter {
  void operator()(OSSL_PARAM_BLD* bld) const { OSSL_PARAM_BLD_free(bld); }
};
struct ParamsDeleter {
  void operator()(OSSL_PARAM* params) const { OSSL_PARAM_free(params); }
};
struct PkeyCtxDeleter {
  void operator()(EVP_PKEY_CTX* ctx) const { EVP_PKEY_CTX_free(ctx); }
};
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxDeleter>;
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
struct EcdsaSigDeleter {
  void operator()(ECDSA_SIG* sig) const { ECDSA_SIG_free(sig); }
};

constexpr int kMinRsaBits = 2048;  // as jose4j, which Kafka's validator uses

// A JWS signature algorithm this broker verifies (RFC 7518 section 3.1).
struct AlgSpec {
  const char* name;
  const char* kty;
  const EVP_MD* (*md)();
  bool pss;          // RSASSA-PSS rather than PKCS#1 v1.5
  const char* crv;   // EC only: the curve the alg names
  size_t coord_len;  // EC only: bytes of r and of s
};

constexpr AlgSpec kAlgs[] = {
    {"RS256", "RSA", EVP_sha256, false, "", 0},
    {"RS384", "RSA", EVP_sha384, false, "", 0},
    {"RS512", "RSA", EVP_sha512, false, "", 0},
    {"PS256", "RSA", EVP_sha256, true, "", 0},
    {"PS384", "RSA", EVP_sha384, true, "", 0},
    {"PS512", "RSA", EVP_sha512, true, "", 0},
    {"ES256", "EC", EVP_sha256, false, "P-256", 32},
    {"ES384", "EC", EVP_sha384, false, "P-384", 48},
    {"ES512", "EC", EVP_sha512, false, "P-521", 66},
};

// A curve a JWK may name, with OpenSSL's group name and its coordinate size.
struct CurveSpec {
  const char* crv;
  const char* group;
  size_t coord_len;
};
constexpr CurveSpec kCurves[] = {
    {"P-256", "prime256v1", 32}, {"P-384", "secp384r1", 48}, {"P-521", "secp521r1", 66}};

// OpenSSL's queued errors, drained so that they never leak into a later call.
std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  std::string text = "unknown OpenSSL error";
  if (code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    text = buf;
  }
  ERR_clear_error();
  return text;
}

Error Invalid(std::string message) { return MakeError(Errc::kInvalidArgument, std::move(message)); }

// The JSON boundary: nlohmann throws on bad input, everything past here does not.
Result<nlohmann::json> ParseJsonObject(std::string_view text, const char* what) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Invalid(std::string(what) + " is not valid JSON: " + e.what());
  }
  if (!doc.is_object()) return Invalid(std::string(what) + " is not a JSON object");
  return doc;
}

Result<nlohmann::json> DecodeJsonPart(std::string_view part, const char* what) {
  auto bytes = Base64UrlDecode(part);
  if (!bytes.ok()) return Invalid(std::string(what) + ": " + bytes.error().message);
  std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  return ParseJsonObject(text, what);
}

// A required string member of a JWK.
Result<std::string> StringMember(const nlohmann::json& obj, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end() || !it->is_string()) {
    return Invalid(std::string("JWK has no string member \"") + name + "\"");
  }
  return it->get<std::string>();
}

// A required base64url member of a JWK (a big-endian number or coordinate).
Result<Bytes> BytesMember(const nlohmann::json& obj, const char* name) {
  STRATA_ASSIGN_OR_RETURN(std::string text, StringMember(obj, name));
  auto bytes = Base64UrlDecode(text);
  if (!bytes.ok())
    return Invalid(std::string("JWK member \"") + name + "\": " + bytes.error().message);
  if (bytes->empty()) return Invalid(std::string("JWK member \"") + name + "\" is empty");
  return bytes;
}

// Builds a public key of `type` ("RSA", "EC") from OpenSSL parameters and
// checks it (an EC point on its curve, a sane RSA modulus and exponent).
Result<EvpPkeyPtr> PublicKeyFromParams(const char* type, OSSL_PARAM_BLD* bld) {
  std::unique_ptr<OSSL_PARAM, ParamsDeleter> params(OSSL_PARAM_BLD_to_param(bld));
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) <= 0) {
    return Invalid(std::string("cannot build an ") + type + " key: " + OpenSslError());
  }
  EVP_PKEY* raw = nullptr;
  if (EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params.get()) <= 0) {
    return Invalid(std::string("invalid ") + type + " key: " + OpenSslError());
  }
  EvpPkeyPtr key(raw);
  PkeyCtxPtr check(EVP_PKEY_CTX_new_from_pkey(nullptr, key.get(), nullptr));
  if (!check || EVP_PKEY_public_check(check.get()) != 1) {
    return Invalid(std::string("invalid ") + type + " key: " + OpenSslError());
  }
  return key;
}

Result<EvpPkeyPtr> RsaKeyFromJwk(const nlohmann::json& jwk) {
  STRATA_ASSIGN_OR_RETURN(Bytes n_bytes, BytesMember(jwk, "n"));
  STRATA_ASSIGN_OR_RETURN(Bytes e_bytes, BytesMember(jwk, "e"));
  BnPtr n(BN_bin2bn(n_bytes.data(), int(n_bytes.size()), nullptr));
  BnPtr e(BN_bin2bn(e_bytes.data(), int(e_bytes.size()), nullptr));
  std::unique_ptr<OSSL_PARAM_BLD, ParamBldDeleter> bld(OSSL_PARAM_BLD_new());
  if (!n || !e || !bld || !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, n.get()) ||
      !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, e.get())) {
    return Invalid("cannot build an RSA key: " + OpenSslError());
  }
  STRATA_ASSIGN_OR_RETURN(EvpPkeyPtr key, PublicKeyFromParams("RSA", bld.get()));
  int bits = EVP_PKEY_get_bits(key.get());
  if (bits < kMinRsaBits) {
    return Invalid("RSA key of " + std::to_string(bits) + " bits is shorter than the " +
                   std::to_string(kMinRsaBits) + " required");
  }
  return key;
}

Result<EvpPkeyPtr> EcKeyFromJwk(const nlohmann::json& jwk, const std::string& crv) {
  const CurveSpec* curve = nullptr;
  for (const CurveSpec& c : kCurves) {
    if (crv == c.crv) curve = &c;
  }
  if (curve == nullptr) return Invalid("unsupported EC curve \"" + crv + "\"");
  STRATA_ASSIGN_OR_RETURN(Bytes x, BytesMember(jwk, "x"));
  STRATA_ASSIGN_OR_RETURN(Bytes y, BytesMember(jwk, "y"));
  if (x.size() != curve->coord_len || y.size() != curve->coord_len) {
    return Invalid("EC key on " + crv + " needs x and y of " + std::to_string(curve->coord_len) +
                   " bytes each");
  }
  Bytes point{0x04};  // SEC 1 uncompressed point: 04 || x || y
  point.insert(point.end(), x.begin(), x.end());
  point.insert(point.end(), y.begin(), y.end());
  std::unique_ptr<OSSL_PARAM_BLD, ParamBldDeleter> bld(OSSL_PARAM_BLD_new());
  if (!bld ||
      !OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, curve->group, 0) ||
      !OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                        point.size())) {
    return Invalid("cannot build an EC key: " + OpenSslError());
  }
  return PublicKeyFromParams("EC", bld.get());
}

// The key of an RSA or EC JWK; fills key.crv for EC.
Result<EvpPkeyPtr> PublicKeyFromJwk(const nlohmann::json& jwk, Jwks::Key& key) {
  if (key.kty == "RSA") return RsaKeyFromJwk(jwk);
  STRATA_ASSIGN_OR_RETURN(key.crv, StringMember(jwk, "crv"));
  return EcKeyFromJwk(jwk, key.crv);
}

// One JWK; nullopt for a key this broker does not verify with (skipped).
Result<std::optional<Jwks::Key>> KeyFromJwk(const nlohmann::json& jwk) {
  if (!jwk.is_object()) return Invalid("JWKS \"keys\" holds a non-object");
  STRATA_ASSIGN_OR_RETURN(std::string kty, StringMember(jwk, "kty"));
  auto use = jwk.find("use");
  if (use != jwk.end() && *use != "sig") return std::optional<Jwks::Key>();
  if (kty != "RSA" && kty != "EC") return std::optional<Jwks::Key>();
  Jwks::Key key;
  key.kty = kty;
  if (auto kid = jwk.find("kid"); kid != jwk.end()) {
    if (!kid->is_string()) return Invalid("JWK \"kid\" is not a string");
    key.kid = kid->get<std::string>();
  }
  if (auto alg = jwk.find("alg"); alg != jwk.end()) {
    if (!alg->is_string()) return Invalid("JWK \"alg\" is not a string");
    key.alg = alg->get<std::string>();
  }
  auto pkey = PublicKeyFromJwk(jwk, key);
  if (!pkey.ok()) return Invalid("JWK kid \"" + key.kid + "\": " + pkey.error().message);
  key.pkey = std::move(pkey).value();
  return std::optional<Jwks::Key>(std::move(key));
}

const AlgSpec* FindAlg(const std::string& alg) {
  for (const AlgSpec& spec : kAlgs) {
    if (alg == spec.name) return &spec;
  }
  return nullptr;
}

// The alg named by the header, refusing the ones no broker should accept.
Result<const AlgSpec*> HeaderAlg(const nlohmann::json& header) {
  auto it = header.find("alg");
  if (it == header.end() || !it->is_string()) return Invalid("the JWT header has no alg");
  std::string alg = it->get<std::string>();
  if (alg == "none") return Invalid("alg \"none\" is not accepted: the token is unsigned");
  if (alg.starts_with("HS")) {
    return Invalid("alg \"" + alg +
                   "\" (a shared-secret HMAC) is not accepted: tokens must be signed with a key "
                   "from the JWKS");
  }
  const AlgSpec* spec = FindAlg(alg);
  if (spec == nullptr) return Invalid("unsupported alg \"" + alg + "\"");
  // RFC 7515 section 4.1.11: extensions marked critical must be understood; none are.
  if (header.contains("crit")) return Invalid("the JWT header has crit extensions, none supported");
  return spec;
}

// JWS carries ECDSA signatures as r || s (RFC 7518 section 3.4); OpenSSL
// verifies the DER SEQUENCE { r INTEGER, s INTEGER }.
Result<Bytes> EcdsaRawToDer(ByteView raw, size_t coord_len) {
  if (raw.size() != 2 * coord_len) {
    return Invalid("ECDSA signature is " + std::to_string(raw.size()) + " bytes, expected " +
                   std::to_string(2 * coord_len) + " (r || s)");
  }
  std::unique_ptr<ECDSA_SIG, EcdsaSigDeleter> sig(ECDSA_SIG_new());
  BnPtr r(BN_bin2bn(raw.data(), int(coord_len), nullptr));
  BnPtr s(BN_bin2bn(raw.data() + coord_len, int(coord_len), nullptr));
  if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r.get(), s.get()) != 1) {
    return Invalid("cannot convert the ECDSA signature: " + OpenSslError());
  }
  r.release();  // owned by sig now
  s.release();
  int len = i2d_ECDSA_SIG(sig.get(), nullptr);
  if (len <= 0) return Invalid("cannot encode the ECDSA signature: " + OpenSslError());
  Bytes der(size_t(len), 0);
  uint8_t* p = der.data();
  i2d_ECDSA_SIG(sig.get(), &p);
  return der;
}

// EVP_DigestVerify of `signature` over `input` under `spec`.
bool DigestVerify(EVP_PKEY* key, const AlgSpec& spec, std::string_view input, ByteView signature) {
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;  // owned by ctx
  bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), &pctx, spec.md(), nullptr, key) == 1;
  if (ok && spec.pss) {
    ok = EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) > 0 &&
         EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) > 0;
  }
  ok = ok && EVP_DigestVerify(ctx.get(), signature.data(), signature.size(),
                              reinterpret_cast<const uint8_t*>(input.data()), input.size()) == 1;
  if (!ok) ERR_clear_error();
  return ok;
}

}  // namespace
}  // namespace jwt_impl

void EvpPkeyDeleter::operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }

Result<Jwt> ParseJwt(std::string_view compact) {
  if (compact.size() > kMaxJwtBytes) {
    return jwt_impl::Invalid("the token is " + std::to_string(compact.size()) +
                             " bytes, more than the " + std::to_string(kMaxJwtBytes) + " accepted");
  }
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t dot = compact.find('.', start);
    parts.push_back(compact.substr(start, dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (parts.size() != 3) {
    std::string msg =
        "a signed JWT has 3 dot-separated parts, this token has " + std::to_string(parts.size());
    if (parts.size() == 5) msg += " (encrypted JWE tokens are not supported)";
    return jwt_impl::Invalid(std::move(msg));
  }
  Jwt jwt;
  STRATA_ASSIGN_OR_RETURN(jwt.header, jwt_impl::DecodeJsonPart(parts[0], "JWT header"));
  STRATA_ASSIGN_OR_RETURN(jwt.claims, jwt_impl::DecodeJsonPart(parts[1], "JWT payload"));
  auto signature = Base64UrlDecode(parts[2]);
  if (!signature.ok()) return jwt_impl::Invalid("JWT signature: " + signature.error().message);
  jwt.signature = std::move(signature).value();
  jwt.signing_input = std::string(compact.substr(0, parts[0].size() + 1 + parts[1].size()));
  return jwt;
}

Result<Jwks> Jwks::Parse(std::string_view text) {
  STRATA_ASSIGN_OR_RETURN(nlohmann::json doc, jwt_impl::ParseJsonObject(text, "JWKS"));
  auto keys = doc.find("keys");
  if (keys == doc.end() || !keys->is_array()) {
    return jwt_impl::Invalid("JWKS has no \"keys\" array");
  }
  Jwks jwks;
  for (const nlohmann::json& jwk : *keys) {
    STRATA_ASSIGN_OR_RETURN(std::optional<Key> key, jwt_impl::KeyFromJwk(jwk));
    if (key) jwks.keys_.push_back(std::move(*key));
  }
  return jwks;
}

Result<const Jwks::Key*> Jwks::FindKey(const Jwt& jwt) const {
  auto kid_it = jwt.header.find("kid");
  if (kid_it == jwt.header.end()) {
    if (keys_.size() == 1) return &keys_[0];
    return jwt_impl::Invalid("the token has no kid and the JWKS holds " +
                             std::to_string(keys_.size()) + " keys");
  }
  if (!kid_it->is_string()) return jwt_impl::Invalid("the JWT header's kid is not a string");
  const std::string& kid = kid_it->get_ref<const std::string&>();
  for (const Key& key : keys_) {
    if (key.kid == kid) return &key;
  }
  // kNotFound rather than kInvalidArgument: the set may be stale (keys
  // rotated at the provider), which the caller can act on.
  return MakeError(Errc::kNotFound, "no key with kid \"" + kid + "\" in the JWKS");
}

Status Jwks::Verify(const Jwt& jwt) const {
  STRATA_ASSIGN_OR_RETURN(const jwt_impl::AlgSpec* spec, jwt_impl::HeaderAlg(jwt.header));
  if (jwt.signature.empty()) return jwt_impl::Invalid("the token has no signature");
  STRATA_ASSIGN_OR_RETURN(const Key* key, FindKey(jwt));
  std::string what = std::string(spec->name) + " with kid \"" + key->kid + "\"";
  if (key->kty != spec->kty || (key->kty == "EC" && key->crv != spec->crv)) {
    return jwt_impl::Invalid("alg " + what + " does not fit that key (" + key->kty + " " +
                             key->crv + ")");
  }
  if (!key->alg.empty() && key->alg != spec->name) {
    return jwt_impl::Invalid("alg " + what + " does not match the key's alg " + key->alg);
  }
  Bytes der;
  ByteView signature = jwt.signature;
  if (spec->coord_len != 0) {
    STRATA_ASSIGN_OR_RETURN(der, jwt_impl::EcdsaRawToDer(jwt.signature, spec->coord_len));
    signature = der;
  }
  if (!jwt_impl::DigestVerify(key->pkey.get(), *spec, jwt.signing_input, signature)) {
    return jwt_impl::Invalid("invalid signature (" + what + ")");
  }
  return Status::Ok();
}

}  // namespace strata::security
