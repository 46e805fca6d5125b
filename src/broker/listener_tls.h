#pragma once
// The TLS settings of a listener from the broker config: Kafka's ssl.* keys,
// each overridable per listener as listener.name.<listener in lower case>.<key>;
// and the client context brokers reach each other's SSL listener with.
#include <string>

#include "config/broker_config.h"
#include "net/tls_context.h"

namespace strata::broker {

net::TlsSettings ListenerTlsSettings(const config::BrokerConfig& config,
                                     const std::string& listener_name);

// The context this broker connects to its peers with: null when the
// inter-broker listener is PLAINTEXT. kInvalidArgument naming the setting.
Result<std::shared_ptr<asio::ssl::context>> InterBrokerClientTls(
    const config::BrokerConfig& config);

}  // namespace strata::broker
