#pragma once
// Config definitions: the names, types, defaults and validity rules of broker
// and topic configs, following Kafka's names. One table drives parsing,
// validation (start-up, CreateTopics, AlterConfigs) and DescribeConfigs.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace strata::config {

// Kafka's DescribeConfigs ConfigType values.
enum class ConfigType : int8_t {
  kBoolean = 1,
  kString = 2,
  kInt = 3,
  kShort = 4,
  kLong = 5,
  kDouble = 6,
  kList = 7,
  kPassword = 9,
};

struct ConfigDef {
  std::string name;
  ConfigType type;
  std::string default_value;
  std::string doc;
  // Extra rule beyond the type check; returns an error message or nullopt.
  std::function<std::optional<std::string>(const std::string&)> rule;
  // For topic configs: the broker config that supplies the default.
  std::string broker_synonym;
  bool read_only = false;  // broker: needs a restart (all statics for now)
};

// Checks type and rule; returns a message naming the problem, or nullopt.
std::optional<std::string> ValidateValue(const ConfigDef& def, const std::string& value);

const std::vector<ConfigDef>& TopicConfigDefs();
const std::vector<ConfigDef>& BrokerConfigDefs();
const ConfigDef* FindTopicConfig(const std::string& name);
// The topic config whose broker-level default is broker config `name`.
const ConfigDef* FindTopicConfigByBrokerSynonym(const std::string& name);
const ConfigDef* FindBrokerConfig(const std::string& name);

// Rules shared by the tables.
std::function<std::optional<std::string>(const std::string&)> AtLeast(int64_t min);
std::function<std::optional<std::string>(const std::string&)> OneOf(
    std::vector<std::string> allowed);
std::function<std::optional<std::string>(const std::string&)> ListOf(
    std::vector<std::string> allowed);

// Parsing helpers (value already validated).
// A LIST value's items, as Kafka splits them: on commas, whitespace around
// items trimmed, empty items dropped.
std::vector<std::string> SplitList(const std::string& value);

int64_t ToLong(const std::string& value);
bool ToBool(const std::string& value);

}  // namespace strata::config
