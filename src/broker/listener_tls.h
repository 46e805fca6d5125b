#pragma once
// The TLS settings of a listener from the broker config: Kafka's ssl.* keys,
// each overridable per listener as listener.name.<listener in lower case>.<key>;
// and the client context brokers reach each other's SSL listener with.
#include <map>
#include <string>

#include "config/broker_config.h"
#include "net/client.h"
#include "net/tls_context.h"

namespace strata::broker {

// `dynamic`: this broker's dynamic configs, whose
// listener.name.<listener>.ssl.* keystore and truststore settings win over
// server.properties (the overload without reads them from `config`).
net::TlsSettings ListenerTlsSettings(const config::BrokerConfig& config,
                                     const std::string& listener_name,
                                     const std::map<std::string, std::string>& dynamic);
net::TlsSettings ListenerTlsSettings(const config::BrokerConfig& config,
                                     const std::string& listener_name);

// How this broker connects to its peers' inter-broker listener: TLS for SSL
// and SASL_SSL (the listener's ssl.* settings: its truststore, its keystore
// as client certificate, ssl.endpoint.identification.algorithm), SASL for
// SASL_PLAINTEXT and SASL_SSL (sasl.mechanism.inter.broker.protocol, with
// the username and password of the listener's JAAS config for that
// mechanism). `dynamic`: this broker's dynamic configs, which may replace
// the listener's keystore and truststore. kInvalidArgument naming the
// setting.
Result<net::ClientSecurity> InterBrokerClientSecurity(
    const config::BrokerConfig& config, const std::map<std::string, std::string>& dynamic);

}  // namespace strata::broker
