#pragma once
// Listeners: the broker's named listeners as Kafka configures them.
//   listeners                        NAME://host:port,... (where it accepts)
//   advertised.listeners             NAME://host:port,... (what clients and
//                                    brokers are told; default: listeners)
//   listener.security.protocol.map   NAME:PROTOCOL,... (PLAINTEXT, SSL,
//                                    SASL_PLAINTEXT, SASL_SSL)
//   inter.broker.listener.name       the listener brokers reach each other on
//                                    (default: the one named after
//                                    security.inter.broker.protocol)
// A client is answered with the brokers' endpoints on the listener its
// connection came in on; brokers use the inter-broker listener.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::config {

class BrokerConfig;

enum class SecurityProtocol : uint8_t { kPlaintext, kSsl, kSaslPlaintext, kSaslSsl };

std::optional<SecurityProtocol> ParseSecurityProtocol(std::string_view name);
std::string_view SecurityProtocolName(SecurityProtocol protocol);

struct Endpoint {
  std::string listener_name = "PLAINTEXT";
  std::string host;
  uint16_t port = 0;
  SecurityProtocol protocol = SecurityProtocol::kPlaintext;
};

// NAME://host:port ("" host: every address); throws ConfigError naming `key`.
Endpoint ParseEndpoint(const std::string& key, const std::string& value);

// The listener configuration of a broker, validated.
struct ListenerConfig {
  std::vector<Endpoint> listeners;   // as bound
  std::vector<Endpoint> advertised;  // one per listener, same order
  std::string inter_broker;          // a listener name

  // Reads and checks the keys above from `config`; throws ConfigError.
  static ListenerConfig From(const BrokerConfig& config);
  const Endpoint* Advertised(std::string_view listener_name) const;
};

}  // namespace strata::config
