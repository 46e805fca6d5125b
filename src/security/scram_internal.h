#pragma once
// Pieces shared by the SCRAM server (scram_server.cc) and client
// (scram_client.cc): the mechanism's hash and HMAC, and RFC 5802's message
// grammar. Internal to src/security; the public API is scram.h.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "security/scram.h"

namespace strata::security::scram {

// --- crypto (scram.cc) ---
size_t HashSize(ScramMechanism mechanism);  // 32 or 64
Bytes Hash(ScramMechanism mechanism, ByteView data);
Bytes Hmac(ScramMechanism mechanism, ByteView key, ByteView data);
Bytes Xor(ByteView a, ByteView b);  // a and b of equal size
inline ByteView AsBytes(std::string_view s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// --- messages (scram_messages.cc) ---
// RFC 5802's saslname: ',' and '=' written as =2C and =3D.
std::string EncodeSaslName(std::string_view name);
std::optional<std::string> DecodeSaslName(std::string_view saslname);

struct ClientFirst {
  std::string gs2_header;  // "n,," / "y,," / "n,a=<authzid>," exactly as sent
  std::string authzid;     // decoded; empty when absent
  std::string user;        // decoded
  std::string nonce;
  std::string bare;  // client-first-message-bare as sent, for AuthMessage
  std::map<std::string, std::string> extensions;
};
struct ServerFirst {
  std::string nonce;
  Bytes salt;
  int32_t iterations = 0;
};
struct ClientFinal {
  Bytes channel_binding;  // the decoded c= attribute
  std::string nonce;
  Bytes proof;
  std::string without_proof;  // client-final-message-without-proof as sent
};
struct ServerFinal {
  std::optional<std::string> error;  // e=<server-error-value>
  Bytes signature;                   // v=<signature>, when no error
};

// Each fails with kInvalidArgument describing the first malformed attribute.
// Attributes RFC 5802 reserves (m=) and channel binding (p=) are refused.
Result<ClientFirst> ParseClientFirst(std::string_view text);
Result<ServerFirst> ParseServerFirst(std::string_view text);
Result<ClientFinal> ParseClientFinal(std::string_view text);
Result<ServerFinal> ParseServerFinal(std::string_view text);

}  // namespace strata::security::scram
