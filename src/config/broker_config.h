#pragma once
// BrokerConfig: the validated broker configuration (server.properties plus
// --set overrides). Built once at start-up; throws ConfigError naming the key
// on any invalid value; unknown keys are logged as warnings and ignored.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/config_def.h"
#include "config/properties.h"

namespace strata::config {

struct Endpoint {
  std::string listener_name = "PLAINTEXT";
  std::string host;
  uint16_t port = 0;
};

class BrokerConfig {
 public:
  // Validates `props`; throws ConfigError. Returns the unknown keys via `unknown`.
  static BrokerConfig FromProperties(const Properties& props, std::vector<std::string>* unknown);

  int32_t node_id() const { return node_id_; }
  const std::vector<Endpoint>& listeners() const { return listeners_; }
  const std::vector<Endpoint>& advertised_listeners() const { return advertised_; }
  const std::string& log_dir() const { return log_dir_; }

  // The effective value of a broker config (explicit or default).
  const std::string& Get(const std::string& name) const;
  int64_t GetLong(const std::string& name) const { return ToLong(Get(name)); }
  bool GetBool(const std::string& name) const { return ToBool(Get(name)); }
  // True when the operator set the key (DescribeConfigs source STATIC_BROKER_CONFIG).
  bool IsExplicit(const std::string& name) const { return explicit_.count(name) > 0; }

  // The broker-level default of a topic config (from its broker synonym, or
  // the topic default). Used for topics without an override.
  std::string TopicDefault(const ConfigDef& topic_def) const;

 private:
  void ResolveDerived();  // log.roll.hours, log.retention.hours, broker.id, ...

  std::map<std::string, std::string> values_;
  std::map<std::string, std::string> explicit_;
  int32_t node_id_ = 1;
  std::vector<Endpoint> listeners_;
  std::vector<Endpoint> advertised_;
  std::string log_dir_;
};

// Parses "PLAINTEXT://host:port"; throws ConfigError naming `key`.
Endpoint ParseEndpoint(const std::string& key, const std::string& value);

}  // namespace strata::config
