#pragma once
// Kafka's rules for topic names and topic configs, shared by CreateTopics,
// auto-creation, AlterConfigs and IncrementalAlterConfigs.
#include <map>
#include <optional>
#include <string>

#include "config/broker_config.h"
#include "storage/log.h"

namespace strata::broker {

// nullopt when `name` is a legal topic name; otherwise the reason.
std::optional<std::string> InvalidTopicNameReason(const std::string& name);

// nullopt when every key is a known topic config with a valid value.
std::optional<std::string> InvalidTopicConfigReason(
    const std::map<std::string, std::string>& configs);

// nullopt unless the effective configs (overrides over broker defaults) ask
// for tiering a compacted topic, which Kafka refuses (INVALID_CONFIG).
std::optional<std::string> InvalidTieringReason(const config::BrokerConfig& broker,
                                                const std::map<std::string, std::string>& configs);

// The storage settings of a topic: its overrides over the broker defaults.
storage::LogConfig ResolveLogConfig(const config::BrokerConfig& broker,
                                    const std::map<std::string, std::string>& overrides);

// The effective value of one topic config, and whether it is an override.
std::string EffectiveTopicConfig(const config::BrokerConfig& broker,
                                 const std::map<std::string, std::string>& overrides,
                                 const config::ConfigDef& def);

}  // namespace strata::broker
