#pragma once
// The effective configs of a topic or of this broker, with Kafka's config
// sources, for DescribeConfigs and the CreateTopics v5+ response.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/broker_config.h"

namespace strata::kafka {

// Kafka's ConfigSource values.
enum class ConfigSource : int8_t {
  kTopicConfig = 1,
  kDynamicBrokerConfig = 2,
  kDynamicDefaultBrokerConfig = 3,
  kStaticBrokerConfig = 4,
  kDefaultConfig = 5,
};

struct ConfigSynonymEntry {
  std::string name;
  std::string value;
  ConfigSource source;
};

struct ConfigEntry {
  std::string name;
  std::string value;
  ConfigSource source;
  bool read_only = false;
  bool sensitive = false;
  config::ConfigType type;
  std::string doc;
  std::vector<ConfigSynonymEntry> synonyms;  // most specific first, as Kafka lists them
};

std::vector<ConfigEntry> TopicConfigEntries(const config::BrokerConfig& broker,
                                            const std::map<std::string, std::string>& overrides);
// This broker's configs, dynamic values first.
std::vector<ConfigEntry> BrokerConfigEntries(const config::BrokerConfig& broker);
// The cluster-wide dynamic broker configs (DescribeConfigs of the default
// broker resource, as kafka-configs --entity-default --describe shows them).
std::vector<ConfigEntry> DefaultBrokerConfigEntries(const config::BrokerConfig& broker);

// Resource types of the config APIs.
inline constexpr int8_t kResourceTopic = 2;
inline constexpr int8_t kResourceBroker = 4;
inline constexpr int8_t kResourceBrokerLogger = 8;

}  // namespace strata::kafka
