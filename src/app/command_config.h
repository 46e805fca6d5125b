#pragma once
// The client settings the `strata` CLI takes from a Kafka-style properties
// file (--command-config), as Kafka's tools do: security.protocol,
// sasl.mechanism with sasl.jaas.config (username/password, as
// PlainLoginModule and ScramLoginModule take them) or librdkafka's
// sasl.username / sasl.password, ssl.truststore.location (PEM CAs),
// ssl.keystore.location (PEM key and certificate, for mutual TLS),
// ssl.endpoint.identification.algorithm. And for the admin API:
// strata.admin.token (or the STRATA_ADMIN_TOKEN environment variable), with
// the same CA file and certificate for an https:// --admin.
#include <string>

#include "base/result.h"
#include "net/client.h"

namespace strata::app {

struct CommandConfig {
  net::ClientSecurity kafka;
  std::string admin_token;
  std::string ca_file;    // ssl.truststore.location
  std::string cert_file;  // ssl.keystore.location (key and chain, PEM)
  std::string key_password;
};

// Reads `path` (empty: no file; then only STRATA_ADMIN_TOKEN applies).
// kInvalidArgument naming the key that cannot work.
Result<CommandConfig> LoadCommandConfig(const std::string& path);

// The file given with --command-config, for the calls that follow.
void SetCommandConfigPath(const std::string& path);
// The settings of that file, read once.
Result<CommandConfig> CurrentCommandConfig();

}  // namespace strata::app
