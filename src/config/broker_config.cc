#include "config/broker_config.h"

#include <set>
#include <string_view>

namespace strata::config {

BrokerConfig BrokerConfig::FromProperties(const Properties& props,
                                          std::vector<std::string>* unknown) {
  BrokerConfig cfg;
  for (const auto& def : BrokerConfigDefs()) cfg.values_[def.name] = def.default_value;
  for (const auto& [key, value] : props) {
    if (key.starts_with("listener.name.")) {
      // Per-listener overrides: checked where they are used (a TLS context).
      cfg.listener_values_[key] = value;
      continue;
    }
    const ConfigDef* def = FindBrokerConfig(key);
    if (def == nullptr) {
      // Topic-level keys given at broker level are not Kafka's convention; warn.
      if (unknown) unknown->push_back(key);
      continue;
    }
    if (auto err = ValidateValue(*def, value)) {
      throw ConfigError("invalid value for " + key + ": " + *err);
    }
    cfg.values_[key] = value;
    cfg.explicit_[key] = value;
  }
  cfg.ResolveDerived();
  return cfg;
}

void BrokerConfig::ResolveDerived() {
  // Kafka precedence: *.ms over *.minutes over *.hours.
  if (!IsExplicit("log.roll.ms") && IsExplicit("log.roll.hours")) {
    values_["log.roll.ms"] = std::to_string(GetLong("log.roll.hours") * 3600000);
  }
  if (!IsExplicit("log.retention.ms")) {
    if (IsExplicit("log.retention.minutes")) {
      values_["log.retention.ms"] = std::to_string(GetLong("log.retention.minutes") * 60000);
    } else if (IsExplicit("log.retention.hours")) {
      values_["log.retention.ms"] = std::to_string(GetLong("log.retention.hours") * 3600000);
    }
  }
  node_id_ = static_cast<int32_t>(GetLong("node.id"));
  if (!IsExplicit("node.id") && IsExplicit("broker.id") && GetLong("broker.id") >= 0) {
    node_id_ = static_cast<int32_t>(GetLong("broker.id"));
    values_["node.id"] = values_["broker.id"];
  }
  listeners_ = ListenerConfig::From(*this);
  std::string dirs =
      IsExplicit("log.dirs") || !IsExplicit("log.dir") ? Get("log.dirs") : Get("log.dir");
  auto list = SplitList(dirs);
  if (list.empty()) throw ConfigError("log.dirs: at least one directory is required");
  log_dir_ = list.front();
}

std::optional<std::string> BrokerConfig::ListenerValue(const std::string& listener,
                                                       const std::string& key) const {
  auto it = listener_values_.find("listener.name." + listener + "." + key);
  if (it == listener_values_.end()) return std::nullopt;
  return it->second;
}

const std::string& BrokerConfig::Get(const std::string& name) const {
  static const std::string kEmpty;
  auto it = values_.find(name);
  return it == values_.end() ? kEmpty : it->second;
}

std::string BrokerConfig::TopicDefault(const ConfigDef& topic_def) const {
  const std::string& synonym = topic_def.broker_synonym;
  if (synonym.empty()) return topic_def.default_value;
  auto dynamic = Dynamic();
  for (const auto* level : {&dynamic->broker, &dynamic->cluster_default}) {
    auto it = level->find(synonym);
    if (it != level->end()) return it->second;
  }
  if (values_.count(synonym)) return Get(synonym);
  return topic_def.default_value;
}

bool BrokerConfig::IsDynamic(const std::string& name) {
  return FindTopicConfigByBrokerSynonym(name) != nullptr || IsDynamicBrokerOnly(name) ||
         IsDynamicListenerSsl(name);
}

bool BrokerConfig::IsDynamicListenerSsl(const std::string& name) {
  static const std::set<std::string, std::less<>> kReconfigurable = {
      "ssl.keystore.type",          "ssl.keystore.location",   "ssl.keystore.password",
      "ssl.key.password",           "ssl.keystore.key",        "ssl.keystore.certificate.chain",
      "ssl.truststore.type",        "ssl.truststore.location", "ssl.truststore.password",
      "ssl.truststore.certificates"};
  constexpr std::string_view kPrefix = "listener.name.";
  std::string_view rest(name);
  if (!rest.starts_with(kPrefix)) return false;
  rest.remove_prefix(kPrefix.size());
  const size_t dot = rest.find('.');
  return dot != 0 && dot != std::string_view::npos && kReconfigurable.count(rest.substr(dot + 1));
}

bool BrokerConfig::IsDynamicBrokerOnly(const std::string& name) {
  return name == "strata.balancer.enable" || name == "strata.balancer.paused" ||
         name == "strata.balancer.self.healing.enable" ||
         name == "strata.balancer.scaling.activated" ||
         name == "strata.balancer.scaling.draining" || name == "strata.balancer.scaling.retired" ||
         name == "leader.replication.throttled.rate" ||
         name == "follower.replication.throttled.rate" ||
         name == "replica.alter.log.dirs.io.max.bytes.per.second";
}

std::shared_ptr<const BrokerConfig::DynamicConfigs> BrokerConfig::Dynamic() const {
  std::lock_guard lock(dynamic_->mu);
  return dynamic_->value;
}

void BrokerConfig::SetDynamic(DynamicConfigs dynamic) const {
  std::lock_guard lock(dynamic_->mu);
  dynamic.generation = ++dynamic_->generation;
  dynamic_->value = std::make_shared<const DynamicConfigs>(std::move(dynamic));
}

}  // namespace strata::config
