#include "broker/listener_tls.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "broker/listener_sasl.h"
#include "security/jaas.h"
#include "security/scram.h"

namespace strata::broker {

net::TlsSettings ListenerTlsSettings(const config::BrokerConfig& config,
                                     const std::string& listener_name) {
  return ListenerTlsSettings(config, listener_name, config.Dynamic()->broker);
}

net::TlsSettings ListenerTlsSettings(const config::BrokerConfig& config,
                                     const std::string& listener_name,
                                     const std::map<std::string, std::string>& dynamic) {
  const std::string lower = ListenerKeyName(listener_name);
  auto get = [&](const std::string& key) {
    auto it = dynamic.find("listener.name." + lower + "." + key);
    if (it != dynamic.end()) return it->second;
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

namespace {

// The inter-broker mechanism's credentials: username and password options of
// listener.name.<l>.<mechanism>.sasl.jaas.config.
Result<net::ClientSasl> InterBrokerSasl(const config::BrokerConfig& config,
                                        const std::string& listener) {
  net::ClientSasl sasl;
  sasl.mechanism = config.Get("sasl.mechanism.inter.broker.protocol");
  const std::string lower = ListenerKeyName(listener);
  const std::string key =
      fmt::format("listener.name.{}.{}.sasl.jaas.config", lower, ListenerKeyName(sasl.mechanism));
  auto text = config.ListenerValue(lower, ListenerKeyName(sasl.mechanism) + ".sasl.jaas.config");
  if (sasl.mechanism != "PLAIN" && !security::ScramMechanismFromName(sasl.mechanism)) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("sasl.mechanism.inter.broker.protocol: {} is not supported "
                                 "between brokers (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)",
                                 sasl.mechanism));
  }
  if (!text) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("{} must give the username and password brokers use", key));
  }
  auto jaas = security::ParseJaasConfig(*text);
  if (!jaas.ok()) return MakeError(Errc::kInvalidArgument, key + ": " + jaas.error().message);
  auto user = jaas->options.find("username");
  auto password = jaas->options.find("password");
  if (user == jaas->options.end() || password == jaas->options.end()) {
    return MakeError(Errc::kInvalidArgument, key + ": username and password are required");
  }
  sasl.username = user->second;
  sasl.password = password->second;
  return sasl;
}

}  // namespace

Result<net::ClientSecurity> InterBrokerClientSecurity(
    const config::BrokerConfig& config, const std::map<std::string, std::string>& dynamic) {
  using config::SecurityProtocol;
  const std::string& name = config.inter_broker_listener();
  net::ClientSecurity security;
  security.verify_hostname = config.Get("ssl.endpoint.identification.algorithm") == "https";
  for (const config::Endpoint& l : config.listeners()) {
    if (l.listener_name != name) continue;
    if (l.protocol == SecurityProtocol::kSsl || l.protocol == SecurityProtocol::kSaslSsl) {
      STRATA_ASSIGN_OR_RETURN(
          security.tls, net::MakeClientTlsContext(ListenerTlsSettings(config, name, dynamic)));
    }
    if (l.protocol == SecurityProtocol::kSaslPlaintext ||
        l.protocol == SecurityProtocol::kSaslSsl) {
      STRATA_ASSIGN_OR_RETURN(security.sasl, InterBrokerSasl(config, name));
    }
    break;
  }
  return security;
}

}  // namespace strata::broker
