#include "broker/listener_tls.h"

#include <algorithm>
#include <cctype>

namespace strata::broker {

net::TlsSettings ListenerTlsSettings(const config::BrokerConfig& config,
                                     const std::string& listener_name) {
  std::string lower = listener_name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto get = [&](const std::string& key) {
    return config.ListenerValue(lower, key).value_or(config.Get(key));
  };
  net::TlsSettings s;
  s.keystore_type = get("ssl.keystore.type");
  s.keystore_location = get("ssl.keystore.location");
  s.keystore_password = get("ssl.keystore.password");
  s.keystore_key = get("ssl.keystore.key");
  s.keystore_certificate_chain = get("ssl.keystore.certificate.chain");
  s.key_password = get("ssl.key.password");
  s.truststore_type = get("ssl.truststore.type");
  s.truststore_location = get("ssl.truststore.location");
  s.truststore_password = get("ssl.truststore.password");
  s.truststore_certificates = get("ssl.truststore.certificates");
  s.client_auth = get("ssl.client.auth");
  s.enabled_protocols = config::SplitList(get("ssl.enabled.protocols"));
  s.cipher_suites = config::SplitList(get("ssl.cipher.suites"));
  return s;
}

Result<std::shared_ptr<asio::ssl::context>> InterBrokerClientTls(
    const config::BrokerConfig& config) {
  const std::string& name = config.inter_broker_listener();
  for (const config::Endpoint& l : config.listeners()) {
    if (l.listener_name != name || l.protocol != config::SecurityProtocol::kSsl) continue;
    return net::MakeClientTlsContext(ListenerTlsSettings(config, name));
  }
  return std::shared_ptr<asio::ssl::context>();
}

}  // namespace strata::broker
