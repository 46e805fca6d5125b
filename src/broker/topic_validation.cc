#include "broker/topic_validation.h"

#include <cstdlib>

namespace strata::broker {

namespace {
constexpr size_t kMaxTopicNameLength = 249;
}

std::optional<std::string> InvalidTopicNameReason(const std::string& name) {
  if (name.empty()) return "Topic name is illegal, it can't be empty";
  if (name == "." || name == "..") return "Topic name cannot be \".\" or \"..\"";
  if (name.size() > kMaxTopicNameLength) {
    return "Topic name is illegal, it can't be longer than 249 characters, topic name: " + name;
  }
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) {
      return "Topic name \"" + name +
             "\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' "
             "and '-'";
    }
  }
  return std::nullopt;
}

std::optional<std::string> InvalidTopicConfigReason(
    const std::map<std::string, std::string>& configs) {
  for (const auto& [key, value] : configs) {
    const config::ConfigDef* def = config::FindTopicConfig(key);
    if (def == nullptr) return "Unknown topic config name: " + key;
    if (auto err = config::ValidateValue(*def, value)) {
      return "Invalid value " + value + " for configuration " + key + ": " + *err;
    }
  }
  return std::nullopt;
}

std::optional<std::string> InvalidTieringReason(const config::BrokerConfig& broker,
                                                const std::map<std::string, std::string>& configs) {
  auto get = [&](const char* name) {
    return EffectiveTopicConfig(broker, configs, *config::FindTopicConfig(name));
  };
  if (!config::ToBool(get("remote.storage.enable"))) return std::nullopt;
  const std::string policy = get("cleanup.policy");
  if (policy.find("compact") == std::string::npos) return std::nullopt;
  return "Invalid configuration: remote.storage.enable=true cannot be combined with "
         "cleanup.policy=" +
         policy + " (tiered storage does not support compacted topics; use cleanup.policy=delete)";
}

std::string EffectiveTopicConfig(const config::BrokerConfig& broker,
                                 const std::map<std::string, std::string>& overrides,
                                 const config::ConfigDef& def) {
  auto it = overrides.find(def.name);
  if (it != overrides.end()) return it->second;
  return broker.TopicDefault(def);
}

storage::LogConfig ResolveLogConfig(const config::BrokerConfig& broker,
                                    const std::map<std::string, std::string>& overrides) {
  auto get = [&](const char* name) {
    return EffectiveTopicConfig(broker, overrides, *config::FindTopicConfig(name));
  };
  auto num = [&](const char* name) { return config::ToLong(get(name)); };
  storage::LogConfig c;
  c.segment_bytes = num("segment.bytes");
  c.segment_ms = num("segment.ms");
  c.segment_index_bytes = num("segment.index.bytes");
  c.index_interval_bytes = static_cast<int32_t>(num("index.interval.bytes"));
  c.retention_ms = num("retention.ms");
  c.retention_bytes = num("retention.bytes");
  c.flush_messages = num("flush.messages");
  c.flush_ms = num("flush.ms");
  c.max_message_bytes = static_cast<int32_t>(num("max.message.bytes"));
  c.message_timestamp_log_append = get("message.timestamp.type") == "LogAppendTime";
  c.message_timestamp_before_max_ms = num("message.timestamp.before.max.ms");
  c.message_timestamp_after_max_ms = num("message.timestamp.after.max.ms");
  c.cleanup_delete = get("cleanup.policy").find("delete") != std::string::npos;
  c.compacted = get("cleanup.policy").find("compact") != std::string::npos;
  c.delete_retention_ms = num("delete.retention.ms");
  c.min_cleanable_dirty_ratio = std::strtod(get("min.cleanable.dirty.ratio").c_str(), nullptr);
  c.min_compaction_lag_ms = num("min.compaction.lag.ms");
  c.max_compaction_lag_ms = num("max.compaction.lag.ms");
  // Tiering also needs the broker switch; without it the topic stays local.
  // Compacted topics are never tiered (Kafka rejects that combination).
  c.remote_storage_enable = config::ToBool(get("remote.storage.enable")) &&
                            broker.GetBool("remote.log.storage.system.enable") && !c.compacted;
  c.local_retention_ms = num("local.retention.ms");
  c.local_retention_bytes = num("local.retention.bytes");
  return c;
}

}  // namespace strata::broker
