#pragma once
// TLS for Kafka listeners: the settings of one listener (Kafka's ssl.* keys,
// resolved by the broker) and the OpenSSL server context built from them.
//   keystore   PEM: private key + certificate chain in one file (or inline);
//              PKCS12: a password-protected bundle
//   truststore the CAs client certificates are checked against (mTLS)
//   client_auth none | requested | required
//   enabled_protocols TLSv1.2, TLSv1.3; cipher_suites by IANA name (Java's
//              names, which Kafka operators write), empty for OpenSSL's
#include <asio/ssl/context.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace strata::net {

struct TlsSettings {
  std::string keystore_type = "PEM";
  std::string keystore_location;
  std::string keystore_password;
  std::string keystore_key;                // inline PEM
  std::string keystore_certificate_chain;  // inline PEM
  std::string key_password;
  std::string truststore_type = "PEM";
  std::string truststore_location;
  std::string truststore_password;
  std::string truststore_certificates;  // inline PEM
  std::string client_auth = "none";
  std::vector<std::string> enabled_protocols{"TLSv1.2", "TLSv1.3"};
  std::vector<std::string> cipher_suites;

  bool operator==(const TlsSettings&) const = default;
};

// The server context for `settings`; kInvalidArgument naming the setting
// and OpenSSL's reason when a file or value is unusable.
Result<std::shared_ptr<asio::ssl::context>> MakeServerTlsContext(const TlsSettings& settings);
// The context a broker connects to its peers' SSL listener with: their
// certificates checked against the truststore (the system's CAs when none
// is set), the keystore presented when the peer asks for one.
Result<std::shared_ptr<asio::ssl::context>> MakeClientTlsContext(const TlsSettings& settings);

// Why `after` may not replace `before` as a listener's server context: its
// certificate has another subject or drops one of the subject alternative
// names (it may add some). Kafka refuses such a keystore update, so that
// clients and peers that check the name keep connecting. nullopt: it may.
std::optional<std::string> CertificateIdentityChange(const asio::ssl::context& before,
                                                     const asio::ssl::context& after);

}  // namespace strata::net
