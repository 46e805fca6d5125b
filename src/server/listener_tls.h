#pragma once
// The TLS settings of a listener from the broker config: Kafka's ssl.* keys,
// each overridable per listener as listener.name.<listener in lower case>.<key>.
#include <string>

#include "config/broker_config.h"
#include "net/tls_context.h"

namespace strata::server {

net::TlsSettings ListenerTlsSettings(const config::BrokerConfig& config,
                                     const std::string& listener_name);

}  // namespace strata::server
