#include "app/command_config.h"

#include <cstdlib>

#include "config/properties.h"
#include "net/tls_context.h"
#include "security/jaas.h"

namespace strata::app {

namespace {

std::string& CommandConfigPath() {
  static std::string path;
  return path;
}

std::string Get(const config::Properties& props, const std::string& key) {
  auto it = props.find(key);
  return it == props.end() ? std::string() : it->second;
}

// The SASL user and password: sasl.jaas.config's options, or librdkafka's keys.
Status ReadSasl(const config::Properties& props, net::ClientSasl& sasl) {
  sasl.mechanism = Get(props, "sasl.mechanism");
  if (sasl.mechanism.empty()) sasl.mechanism = "GSSAPI";
  if (sasl.mechanism != "PLAIN" && sasl.mechanism.rfind("SCRAM-SHA-", 0) != 0) {
    return MakeError(Errc::kInvalidArgument,
                     "sasl.mechanism: " + sasl.mechanism +
                         " is not supported by the strata CLI (PLAIN, SCRAM-SHA-256/512)");
  }
  if (const std::string jaas = Get(props, "sasl.jaas.config"); !jaas.empty()) {
    auto parsed = security::ParseJaasConfig(jaas);
    if (!parsed.ok()) {
      return MakeError(Errc::kInvalidArgument, "sasl.jaas.config: " + parsed.error().message);
    }
    sasl.username = parsed->options["username"];
    sasl.password = parsed->options["password"];
  } else {
    sasl.username = Get(props, "sasl.username");
    sasl.password = Get(props, "sasl.password");
  }
  if (sasl.username.empty()) {
    return MakeError(Errc::kInvalidArgument,
                     "sasl.jaas.config (or sasl.username/sasl.password) must name the user");
  }
  return Status::Ok();
}

}  // namespace

Result<CommandConfig> LoadCommandConfig(const std::string& path) {
  CommandConfig out;
  if (const char* token = std::getenv("STRATA_ADMIN_TOKEN")) out.admin_token = token;
  if (path.empty()) return out;
  config::Properties props;
  try {
    props = config::LoadPropertiesFile(path);
  } catch (const std::exception& e) {
    return MakeError(Errc::kInvalidArgument, "--command-config " + path + ": " + e.what());
  }
  if (auto token = Get(props, "strata.admin.token"); !token.empty()) out.admin_token = token;
  out.ca_file = Get(props, "ssl.truststore.location");
  out.cert_file = Get(props, "ssl.keystore.location");
  out.key_password = Get(props, "ssl.key.password");
  const std::string protocol = Get(props, "security.protocol").empty()
                                   ? std::string("PLAINTEXT")
                                   : Get(props, "security.protocol");
  if (protocol == "SSL" || protocol == "SASL_SSL") {
    net::TlsSettings tls;
    tls.truststore_location = out.ca_file;
    tls.keystore_location = out.cert_file;
    tls.key_password = out.key_password;
    STRATA_ASSIGN_OR_RETURN(out.kafka.tls, net::MakeClientTlsContext(tls));
    out.kafka.verify_hostname = Get(props, "ssl.endpoint.identification.algorithm") != "";
    if (props.find("ssl.endpoint.identification.algorithm") == props.end()) {
      out.kafka.verify_hostname = true;  // Kafka's default: https
    }
  } else if (protocol != "PLAINTEXT" && protocol != "SASL_PLAINTEXT") {
    return MakeError(Errc::kInvalidArgument, "security.protocol: unknown " + protocol);
  }
  if (protocol == "SASL_PLAINTEXT" || protocol == "SASL_SSL") {
    out.kafka.sasl.emplace();
    STRATA_RETURN_IF_ERROR(ReadSasl(props, *out.kafka.sasl));
  }
  return out;
}

void SetCommandConfigPath(const std::string& path) { CommandConfigPath() = path; }

Result<CommandConfig> CurrentCommandConfig() { return LoadCommandConfig(CommandConfigPath()); }

}  // namespace strata::app
