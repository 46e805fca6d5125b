#include "broker/config_entries.h"

#include <set>

#include "broker/topic_validation.h"

namespace strata::broker {

std::vector<ConfigEntry> TopicConfigEntries(const config::BrokerConfig& broker,
                                            const std::map<std::string, std::string>& overrides) {
  std::vector<ConfigEntry> out;
  for (const auto& def : config::TopicConfigDefs()) {
    ConfigEntry e;
    e.name = def.name;
    e.type = def.type;
    e.doc = def.doc;
    auto it = overrides.find(def.name);
    if (it != overrides.end())
      e.synonyms.push_back({def.name, it->second, ConfigSource::kTopicConfig});
    if (!def.broker_synonym.empty() && broker.IsExplicit(def.broker_synonym)) {
      e.synonyms.push_back(
          {def.broker_synonym, broker.Get(def.broker_synonym), ConfigSource::kStaticBrokerConfig});
    }
    // Kafka lists the broker default as a DEFAULT_CONFIG synonym, except for
    // the *.ms broker keys whose Kafka default is null (derived from *.hours).
    static const std::set<std::string> kNullDefaultInKafka = {
        "log.retention.ms", "log.roll.ms", "log.roll.jitter.ms", "log.flush.interval.ms"};
    if (!def.broker_synonym.empty() && !kNullDefaultInKafka.count(def.broker_synonym)) {
      const config::ConfigDef* bdef = config::FindBrokerConfig(def.broker_synonym);
      e.synonyms.push_back({def.broker_synonym, bdef ? bdef->default_value : def.default_value,
                            ConfigSource::kDefaultConfig});
    }
    if (e.synonyms.empty()) {
      e.value = broker.TopicDefault(def);
      e.source = ConfigSource::kDefaultConfig;
    } else {
      e.value = e.synonyms.front().value;
      e.source = e.synonyms.front().source;
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<ConfigEntry> BrokerConfigEntries(const config::BrokerConfig& broker) {
  std::vector<ConfigEntry> out;
  for (const auto& def : config::BrokerConfigDefs()) {
    ConfigEntry e;
    e.name = def.name;
    e.type = def.type;
    e.doc = def.doc;
    e.read_only = true;  // static configs: changed in server.properties + restart
    e.value = broker.Get(def.name);
    if (broker.IsExplicit(def.name)) {
      e.source = ConfigSource::kStaticBrokerConfig;
      e.synonyms.push_back({def.name, e.value, ConfigSource::kStaticBrokerConfig});
    } else {
      e.source = ConfigSource::kDefaultConfig;
    }
    e.synonyms.push_back({def.name, def.default_value, ConfigSource::kDefaultConfig});
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace strata::broker
