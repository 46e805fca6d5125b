#include "config/broker_config.h"

namespace strata::config {

Endpoint ParseEndpoint(const std::string& key, const std::string& value) {
  Endpoint ep;
  size_t scheme = value.find("://");
  if (scheme == std::string::npos)
    throw ConfigError(key + ": expected NAME://host:port, got '" + value + "'");
  ep.listener_name = value.substr(0, scheme);
  std::string hostport = value.substr(scheme + 3);
  size_t colon = hostport.rfind(':');
  if (colon == std::string::npos) throw ConfigError(key + ": missing port in '" + value + "'");
  ep.host = hostport.substr(0, colon);
  if (ep.host.size() > 1 && ep.host.front() == '[') ep.host = ep.host.substr(1, ep.host.size() - 2);
  if (ep.host.empty()) ep.host = "0.0.0.0";
  try {
    long port = std::stol(hostport.substr(colon + 1));
    if (port < 0 || port > 65535) throw ConfigError(key + ": port out of range in '" + value + "'");
    ep.port = static_cast<uint16_t>(port);
  } catch (const std::logic_error&) {
    throw ConfigError(key + ": invalid port in '" + value + "'");
  }
  return ep;
}

BrokerConfig BrokerConfig::FromProperties(const Properties& props,
                                          std::vector<std::string>* unknown) {
  BrokerConfig cfg;
  for (const auto& def : BrokerConfigDefs()) cfg.values_[def.name] = def.default_value;
  for (const auto& [key, value] : props) {
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
  for (const auto& l : SplitList(Get("listeners")))
    listeners_.push_back(ParseEndpoint("listeners", l));
  if (listeners_.empty()) throw ConfigError("listeners: at least one listener is required");
  if (IsExplicit("advertised.listeners") && !Get("advertised.listeners").empty()) {
    for (const auto& l : SplitList(Get("advertised.listeners"))) {
      advertised_.push_back(ParseEndpoint("advertised.listeners", l));
    }
  } else {
    advertised_ = listeners_;
    for (auto& ep : advertised_) {
      if (ep.host == "0.0.0.0" || ep.host == "::") ep.host = "127.0.0.1";
    }
  }
  std::string dirs =
      IsExplicit("log.dirs") || !IsExplicit("log.dir") ? Get("log.dirs") : Get("log.dir");
  auto list = SplitList(dirs);
  if (list.empty()) throw ConfigError("log.dirs: at least one directory is required");
  log_dir_ = list.front();
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
  return FindTopicConfigByBrokerSynonym(name) != nullptr || IsDynamicBrokerOnly(name);
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
  auto value = std::make_shared<const DynamicConfigs>(std::move(dynamic));
  std::lock_guard lock(dynamic_->mu);
  dynamic_->value = std::move(value);
}

}  // namespace strata::config
