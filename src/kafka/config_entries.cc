#include "kafka/config_entries.h"

#include <set>

#include "broker/topic_validation.h"

namespace strata::kafka {

namespace {

// The dynamic values of broker config `name`, most specific first.
void AddDynamicSynonyms(const config::BrokerConfig::DynamicConfigs& dynamic,
                        const std::string& name, ConfigEntry& e) {
  if (auto it = dynamic.broker.find(name); it != dynamic.broker.end())
    e.synonyms.push_back({name, it->second, ConfigSource::kDynamicBrokerConfig});
  if (auto it = dynamic.cluster_default.find(name); it != dynamic.cluster_default.end())
    e.synonyms.push_back({name, it->second, ConfigSource::kDynamicDefaultBrokerConfig});
}

}  // namespace

std::vector<ConfigEntry> TopicConfigEntries(const config::BrokerConfig& broker,
                                            const std::map<std::string, std::string>& overrides) {
  auto dynamic = broker.Dynamic();
  std::vector<ConfigEntry> out;
  for (const auto& def : config::TopicConfigDefs()) {
    ConfigEntry e;
    e.name = def.name;
    e.type = def.type;
    e.doc = def.doc;
    auto it = overrides.find(def.name);
    if (it != overrides.end())
      e.synonyms.push_back({def.name, it->second, ConfigSource::kTopicConfig});
    if (!def.broker_synonym.empty()) AddDynamicSynonyms(*dynamic, def.broker_synonym, e);
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
  auto dynamic = broker.Dynamic();
  std::vector<ConfigEntry> out;
  for (const auto& def : config::BrokerConfigDefs()) {
    ConfigEntry e;
    e.name = def.name;
    e.type = def.type;
    e.doc = def.doc;
    // Static configs change in server.properties (and a restart); the
    // topic-config defaults also dynamically.
    e.read_only = !config::BrokerConfig::IsDynamic(def.name);
    AddDynamicSynonyms(*dynamic, def.name, e);
    if (broker.IsExplicit(def.name)) {
      e.synonyms.push_back({def.name, broker.Get(def.name), ConfigSource::kStaticBrokerConfig});
    }
    e.synonyms.push_back({def.name, def.default_value, ConfigSource::kDefaultConfig});
    e.value = e.synonyms.front().value;
    e.source = e.synonyms.front().source;
    // A default derived from another key (log.retention.ms from .hours)
    // is the effective value, not the table's.
    if (e.source == ConfigSource::kDefaultConfig) e.value = broker.Get(def.name);
    out.push_back(std::move(e));
  }
  // This broker's dynamic listener keystores (listener.name.<l>.ssl.*).
  for (const auto& [name, value] : dynamic->broker) {
    if (!config::BrokerConfig::IsDynamicListenerSsl(name)) continue;
    ConfigEntry e;
    e.name = name;
    e.value = value;
    e.source = ConfigSource::kDynamicBrokerConfig;
    // Kafka's PASSWORD-typed keys: passwords, and the inline PEM key, chain
    // and trusted certificates.
    e.sensitive = name.ends_with("password") || name.ends_with("keystore.key") ||
                  name.ends_with("keystore.certificate.chain") ||
                  name.ends_with("truststore.certificates");
    e.type = e.sensitive ? config::ConfigType::kPassword : config::ConfigType::kString;
    e.synonyms.push_back({name, value, ConfigSource::kDynamicBrokerConfig});
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<ConfigEntry> DefaultBrokerConfigEntries(const config::BrokerConfig& broker) {
  std::vector<ConfigEntry> out;
  for (const auto& [name, value] : broker.Dynamic()->cluster_default) {
    const config::ConfigDef* def = config::FindBrokerConfig(name);
    if (def == nullptr) continue;
    ConfigEntry e;
    e.name = name;
    e.value = value;
    e.source = ConfigSource::kDynamicDefaultBrokerConfig;
    e.type = def->type;
    e.doc = def->doc;
    e.synonyms.push_back({name, value, ConfigSource::kDynamicDefaultBrokerConfig});
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace strata::kafka
