// SCRAM mechanism names, the key derivations of RFC 5802 section 3 and the
// hash primitives behind them (OpenSSL).
#include "security/scram.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "base/check.h"
#include "security/scram_internal.h"

namespace strata::security {

std::optional<ScramMechanism> ScramMechanismFromName(std::string_view name) {
  if (name == "SCRAM-SHA-256") return ScramMechanism::kSha256;
  if (name == "SCRAM-SHA-512") return ScramMechanism::kSha512;
  return std::nullopt;
}

std::string_view ScramMechanismName(ScramMechanism mechanism) {
  return mechanism == ScramMechanism::kSha256 ? "SCRAM-SHA-256" : "SCRAM-SHA-512";
}

std::optional<ScramMechanism> ScramMechanismFromId(int8_t id) {
  if (id == static_cast<int8_t>(ScramMechanism::kSha256)) return ScramMechanism::kSha256;
  if (id == static_cast<int8_t>(ScramMechanism::kSha512)) return ScramMechanism::kSha512;
  return std::nullopt;
}

namespace scram {
namespace {
const EVP_MD* ScramDigest(ScramMechanism mechanism) {
  return mechanism == ScramMechanism::kSha256 ? EVP_sha256() : EVP_sha512();
}
}  // namespace

size_t HashSize(ScramMechanism mechanism) { return mechanism == ScramMechanism::kSha256 ? 32 : 64; }

Bytes Hash(ScramMechanism mechanism, ByteView data) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  // Fails only when OpenSSL cannot allocate: nothing sensible to return.
  STRATA_CHECK(
      EVP_Digest(data.data(), data.size(), out.data(), &len, ScramDigest(mechanism), nullptr) == 1,
      "EVP_Digest failed");
  out.resize(len);
  return out;
}

Bytes Hmac(ScramMechanism mechanism, ByteView key, ByteView data) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  STRATA_CHECK(HMAC(ScramDigest(mechanism), key.data(), static_cast<int>(key.size()), data.data(),
                    data.size(), out.data(), &len) != nullptr,
               "HMAC failed");
  out.resize(len);
  return out;
}

Bytes Xor(ByteView a, ByteView b) {
  STRATA_CHECK(a.size() == b.size(), "Xor of {} and {} bytes", a.size(), b.size());
  Bytes out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = a[i] ^ b[i];
  return out;
}

}  // namespace scram

Bytes ScramSaltedPassword(ScramMechanism mechanism, std::string_view password, ByteView salt,
                          int32_t iterations) {
  STRATA_CHECK(iterations > 0, "SCRAM iterations {} must be positive", iterations);
  Bytes out(scram::HashSize(mechanism));
  STRATA_CHECK(
      PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), salt.data(),
                        static_cast<int>(salt.size()), iterations, scram::ScramDigest(mechanism),
                        static_cast<int>(out.size()), out.data()) == 1,
      "PKCS5_PBKDF2_HMAC failed");
  return out;
}

ScramCredential ScramCredentialFromSaltedPassword(ScramMechanism mechanism,
                                                  ByteView salted_password, ByteView salt,
                                                  int32_t iterations) {
  Bytes client_key = scram::Hmac(mechanism, salted_password, scram::AsBytes("Client Key"));
  ScramCredential credential;
  credential.salt.assign(salt.begin(), salt.end());
  credential.stored_key = scram::Hash(mechanism, client_key);
  credential.server_key = scram::Hmac(mechanism, salted_password, scram::AsBytes("Server Key"));
  credential.iterations = iterations;
  return credential;
}

ScramCredential MakeScramCredential(ScramMechanism mechanism, std::string_view password,
                                    ByteView salt, int32_t iterations) {
  Bytes salted = ScramSaltedPassword(mechanism, password, salt, iterations);
  return ScramCredentialFromSaltedPassword(mechanism, salted, salt, iterations);
}

Bytes RandomBytes(size_t n) {
  Bytes out(n);
  // Nonces and salts from a predictable source would void SCRAM's guarantees;
  // an unseeded CSPRNG is a broken host, not an error to carry on from.
  STRATA_CHECK(RAND_bytes(out.data(), static_cast<int>(n)) == 1, "RAND_bytes({}) failed", n);
  return out;
}

}  // namespace strata::security
