#pragma once
// BrokerConfig: the validated broker configuration (server.properties plus
// --set overrides). Built once at start-up; throws ConfigError naming the key
// on any invalid value; unknown keys are logged as warnings and ignored.
//
// Dynamic configs: the broker-level defaults of topic configs
// (log.retention.ms, log.segment.bytes, ...) may also be set while the
// cluster runs (kafka-configs --entity-type brokers, per broker or with
// --entity-default for all), held in cluster metadata. The broker installs
// them here (SetDynamic) as its view changes; they win over
// server.properties, a broker's own over the cluster default, and every
// topic without an override of its own follows them. They are the one
// mutable part, safe to read and set from any thread; copies share it.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/config_def.h"
#include "config/listeners.h"
#include "config/properties.h"

namespace strata::config {

class BrokerConfig {
 public:
  // Validates `props`; throws ConfigError. Returns the unknown keys via `unknown`.
  static BrokerConfig FromProperties(const Properties& props, std::vector<std::string>* unknown);

  int32_t node_id() const { return node_id_; }
  const std::vector<Endpoint>& listeners() const { return listeners_.listeners; }
  // One per listener, in the same order.
  const std::vector<Endpoint>& advertised_listeners() const { return listeners_.advertised; }
  // The listener other brokers are reached on (inter.broker.listener.name).
  const std::string& inter_broker_listener() const { return listeners_.inter_broker; }
  const std::string& log_dir() const { return log_dir_; }

  // The effective value of a broker config (explicit or default).
  const std::string& Get(const std::string& name) const;
  int64_t GetLong(const std::string& name) const { return ToLong(Get(name)); }
  bool GetBool(const std::string& name) const { return ToBool(Get(name)); }
  // listener.name.<listener>.<key> (`listener` in lower case), when set.
  std::optional<std::string> ListenerValue(const std::string& listener,
                                           const std::string& key) const;
  // True when the operator set the key (DescribeConfigs source STATIC_BROKER_CONFIG).
  bool IsExplicit(const std::string& name) const { return explicit_.count(name) > 0; }

  // The broker-level default of a topic config (from its broker synonym:
  // dynamic, else server.properties; or the topic default). Used for topics
  // without an override.
  std::string TopicDefault(const ConfigDef& topic_def) const;

  struct DynamicConfigs {
    std::map<std::string, std::string> broker;           // this broker's (--entity-name)
    std::map<std::string, std::string> cluster_default;  // --entity-default
    uint64_t generation = 0;  // set by SetDynamic: one more on every change
  };
  // Whether `name` may be set dynamically: the broker synonym of a topic
  // config, or a dynamic broker-only config (IsDynamicBrokerOnly).
  static bool IsDynamic(const std::string& name);
  // The replication throttles kafka-reassign-partitions sets per broker
  // (leader/follower.replication.throttled.rate, ...): stored, not yet applied.
  static bool IsDynamicBrokerOnly(const std::string& name);
  // A listener's keystore or truststore setting
  // (listener.name.<listener>.ssl.keystore.location and the like): dynamic
  // per broker, so certificates are replaced without a restart (KIP-226).
  static bool IsDynamicListenerSsl(const std::string& name);
  std::shared_ptr<const DynamicConfigs> Dynamic() const;
  void SetDynamic(DynamicConfigs dynamic) const;

 private:
  void ResolveDerived();  // log.roll.hours, log.retention.hours, broker.id, ...

  std::map<std::string, std::string> values_;
  std::map<std::string, std::string> explicit_;
  std::map<std::string, std::string> listener_values_;  // listener.name.* as given
  int32_t node_id_ = 1;
  ListenerConfig listeners_;
  std::string log_dir_;
  struct DynamicSlot {
    std::mutex mu;
    uint64_t generation = 0;
    std::shared_ptr<const DynamicConfigs> value = std::make_shared<DynamicConfigs>();
  };
  std::shared_ptr<DynamicSlot> dynamic_ = std::make_shared<DynamicSlot>();
};

}  // namespace strata::config
