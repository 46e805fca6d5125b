#pragma once
// Test-only helpers for jwt_test.cc, oauthbearer_test.cc and
// jwks_source_test.cc: RSA and EC key pairs made with OpenSSL, their public
// JWKs, and JWTs signed with them the way an identity provider signs
// (EVP_DigestSign; ECDSA's DER signature rewritten as JWS's r || s).
// Header-only so that it stays out of the library.
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "security/base64url.h"
#include "security/jwt.h"

namespace strata::security::testing {

// A private key with its public JWK.
struct TestKey {
  EvpPkeyPtr pkey;
  nlohmann::json jwk;
};

inline std::string B64(std::string_view s) {
  return Base64UrlEncode(ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}
inline std::string B64(const Bytes& b) { return Base64UrlEncode(b); }

// A big-number parameter of `key`, big-endian, left-padded to `width` bytes
// when `width` is not 0.
inline Bytes BnParam(EVP_PKEY* key, const char* name, size_t width = 0) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &bn) != 1) throw std::runtime_error(name);
  Bytes out(width != 0 ? width : size_t(BN_num_bytes(bn)));
  BN_bn2binpad(bn, out.data(), int(out.size()));
  BN_free(bn);
  return out;
}

inline TestKey MakeRsaKey(const std::string& kid, unsigned bits = 2048) {
  TestKey key{EvpPkeyPtr(EVP_RSA_gen(bits)), {}};
  if (!key.pkey) throw std::runtime_error("EVP_RSA_gen");
  key.jwk = {{"kty", "RSA"},
             {"kid", kid},
             {"use", "sig"},
             {"n", B64(BnParam(key.pkey.get(), OSSL_PKEY_PARAM_RSA_N))},
             {"e", B64(BnParam(key.pkey.get(), OSSL_PKEY_PARAM_RSA_E))}};
  return key;
}

inline size_t CoordLen(const std::string& crv) {
  return crv == "P-256" ? 32 : crv == "P-384" ? 48 : 66;
}

// crv: "P-256", "P-384" or "P-521".
inline TestKey MakeEcKey(const std::string& kid, const std::string& crv = "P-256") {
  const char* group = crv == "P-256" ? "prime256v1" : crv == "P-384" ? "secp384r1" : "secp521r1";
  TestKey key{EvpPkeyPtr(EVP_EC_gen(group)), {}};
  if (!key.pkey) throw std::runtime_error("EVP_EC_gen");
  size_t len = CoordLen(crv);
  key.jwk = {{"kty", "EC"},
             {"kid", kid},
             {"crv", crv},
             {"x", B64(BnParam(key.pkey.get(), OSSL_PKEY_PARAM_EC_PUB_X, len))},
             {"y", B64(BnParam(key.pkey.get(), OSSL_PKEY_PARAM_EC_PUB_Y, len))}};
  return key;
}

inline std::string JwksJson(const std::vector<const TestKey*>& keys) {
  nlohmann::json set = {{"keys", nlohmann::json::array()}};
  for (const TestKey* k : keys) set["keys"].push_back(k->jwk);
  return set.dump();
}

// JWS's ECDSA form: r || s, each `len` bytes.
inline Bytes EcdsaDerToRaw(const Bytes& der, size_t len) {
  const uint8_t* p = der.data();
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, long(der.size()));
  if (sig == nullptr) throw std::runtime_error("d2i_ECDSA_SIG");
  Bytes raw(2 * len);
  BN_bn2binpad(ECDSA_SIG_get0_r(sig), raw.data(), int(len));
  BN_bn2binpad(ECDSA_SIG_get0_s(sig), raw.data() + len, int(len));
  ECDSA_SIG_free(sig);
  return raw;
}

// Signs `input` with `key` under JWS alg `alg` (RS*, PS*, ES*).
inline Bytes SignWith(const TestKey& key, const std::string& alg, const std::string& input) {
  const EVP_MD* md = alg.ends_with("256")   ? EVP_sha256()
                     : alg.ends_with("384") ? EVP_sha384()
                                            : EVP_sha512();
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_PKEY_CTX* pctx = nullptr;
  size_t len = 0;
  bool ok = EVP_DigestSignInit(ctx, &pctx, md, nullptr, key.pkey.get()) == 1;
  if (ok && alg.starts_with("PS")) {
    ok = EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) > 0 &&
         EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) > 0;
  }
  const auto* data = reinterpret_cast<const uint8_t*>(input.data());
  ok = ok && EVP_DigestSign(ctx, nullptr, &len, data, input.size()) == 1;
  Bytes sig(len);
  ok = ok && EVP_DigestSign(ctx, sig.data(), &len, data, input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) throw std::runtime_error("EVP_DigestSign");
  sig.resize(len);
  if (alg.starts_with("ES")) return EcdsaDerToRaw(sig, CoordLen(key.jwk["crv"]));
  return sig;
}

// A compact JWS of `claims` with `header` (whose alg picks the algorithm).
inline std::string SignJwt(const TestKey& key, const nlohmann::json& header,
                           const nlohmann::json& claims) {
  std::string input = B64(header.dump()) + "." + B64(claims.dump());
  return input + "." + B64(SignWith(key, header["alg"], input));
}

// A compact JWS with whatever `signature` the test wants (none, garbage).
inline std::string UnsignedJwt(const nlohmann::json& header, const nlohmann::json& claims,
                               const std::string& signature = "") {
  return B64(header.dump()) + "." + B64(claims.dump()) + "." + B64(signature);
}

}  // namespace strata::security::testing
