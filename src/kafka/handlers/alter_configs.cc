// AlterConfigs (33, replaces a resource's overrides) and IncrementalAlterConfigs
// (44, SET/DELETE/APPEND/SUBTRACT per key), for topics and for brokers: one
// broker (its node id) or all (the empty name, kafka-configs --entity-default).
// The dynamic broker configs are the broker defaults of topic configs; the
// others are static (server.properties), and altering them is refused.

#include "protocol/messages/alter_configs.h"

#include <fmt/format.h>

#include "broker/listener_certificates.h"
#include "broker/topic_manager.h"
#include "broker/topic_validation.h"
#include "cluster/metadata.h"
#include "config/config_def.h"
#include "kafka/authorization.h"
#include "kafka/config_entries.h"
#include "kafka/error_mapping.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/messages/incremental_alter_configs.h"

namespace strata::kafka {

namespace {

using protocol::AlterConfigsResourceResponse;
using protocol::ErrorCode;

enum class Op : int8_t { kSet = 0, kDelete = 1, kAppend = 2, kSubtract = 3 };

void Fail(AlterConfigsResourceResponse& out, ErrorCode code, std::string message) {
  out.error_code = Code(code);
  out.error_message = std::move(message);
}

// Checks the resource is a topic that exists; fills `out` on failure.
std::shared_ptr<const broker::TopicInfo> TopicFor(BrokerContext& ctx, int8_t type,
                                                  const std::string& name,
                                                  AlterConfigsResourceResponse& out) {
  out.resource_type = type;
  out.resource_name = name;
  if (type == kResourceBrokerLogger) {
    Fail(out, ErrorCode::kInvalidRequest, "Strata has no dynamic broker logger levels");
    return nullptr;
  }
  if (type != kResourceTopic) {
    Fail(out, ErrorCode::kInvalidRequest, "Unsupported resource type " + std::to_string(type));
    return nullptr;
  }
  auto info = ctx.topics.GetTopicInfo(name);
  if (!info) Fail(out, ErrorCode::kUnknownTopicOrPartition, "Topic '" + name + "' does not exist.");
  return info;
}

// The dynamic-config entity of a broker resource: "default" for the empty
// name, else the node id. nullopt (and `out` failed) for a bad name.
std::optional<std::string> BrokerEntity(const std::string& name,
                                        AlterConfigsResourceResponse& out) {
  out.resource_type = kResourceBroker;
  out.resource_name = name;
  if (name.empty()) return std::string(broker::kDefaultBrokerEntity);
  if (name.find_first_not_of("0123456789") != std::string::npos || name.size() > 9) {
    Fail(out, ErrorCode::kInvalidRequest, "Invalid broker id '" + name + "'");
    return std::nullopt;
  }
  return std::to_string(std::stoi(name));
}

// Fails `out` when a listener's keystore or truststore setting (one of
// `names`) is sent to a broker other than the one it is for: only that
// broker can check its new keystore, so, as Kafka, it must be asked itself.
template <typename Names, typename NameOf>
bool RefusedForAnotherBroker(const BrokerContext& ctx, const std::string& entity,
                             const Names& names, NameOf name_of,
                             AlterConfigsResourceResponse& out) {
  const std::string self = std::to_string(ctx.config.node_id());
  if (entity == broker::kDefaultBrokerEntity || entity == self) return false;
  for (const auto& n : names) {
    if (!config::BrokerConfig::IsDynamicListenerSsl(name_of(n))) continue;
    Fail(out, ErrorCode::kInvalidRequest,
         fmt::format("Unexpected broker id, expected {}, but received {}", self, entity));
    return true;
  }
  return false;
}

// Why `configs` may not be the listener keystore and truststore settings of
// broker `entity`: they are per broker, and the broker handling the request
// checks its own new keystores (the others check theirs when they load them).
std::optional<std::string> InvalidListenerSslReason(
    BrokerContext& ctx, const std::string& entity,
    const std::map<std::string, std::string>& configs) {
  std::string names;
  for (const auto& [name, value] : configs) {
    if (config::BrokerConfig::IsDynamicListenerSsl(name))
      names += (names.empty() ? "" : ", ") + name;
  }
  if (names.empty()) return std::nullopt;
  if (entity == broker::kDefaultBrokerEntity) {
    return "Cannot update these configs at default cluster level, broker id must be specified: " +
           names;
  }
  if (entity != std::to_string(ctx.config.node_id()) || ctx.listener_certificates == nullptr) {
    return std::nullopt;
  }
  return ctx.listener_certificates->InvalidReason(configs);
}

// Why `configs` may not be dynamic broker configs of `entity`, or nullopt:
// each must be the broker default of a topic config, with a value that topic
// config takes, a dynamic broker-only config or a listener's keystore.
std::optional<std::string> InvalidBrokerConfigsReason(
    BrokerContext& ctx, const std::string& entity,
    const std::map<std::string, std::string>& configs) {
  if (auto bad = InvalidListenerSslReason(ctx, entity, configs)) return bad;
  std::vector<std::string> static_names;
  std::map<std::string, std::string> as_topic;
  for (const auto& [name, value] : configs) {
    if (config::BrokerConfig::IsDynamicListenerSsl(name)) continue;
    if (config::BrokerConfig::IsDynamicBrokerOnly(name)) {
      if (auto bad = config::ValidateValue(*config::FindBrokerConfig(name), value)) {
        return name + ": " + *bad;
      }
      continue;
    }
    const config::ConfigDef* topic_def = config::FindTopicConfigByBrokerSynonym(name);
    if (topic_def == nullptr) {
      static_names.push_back(name);
      continue;
    }
    as_topic[topic_def->name] = value;
  }
  if (!static_names.empty()) {
    std::string list;
    for (const auto& n : static_names) list += (list.empty() ? "" : ", ") + n;
    return "Cannot update these configs dynamically: " + list +
           " (only the broker defaults of topic configs are dynamic; change server.properties "
           "and restart)";
  }
  return broker::InvalidTopicConfigReason(as_topic);
}

// Why `configs` may not be a topic's overrides, or nullopt.
std::optional<std::string> InvalidReason(BrokerContext& ctx,
                                         const std::map<std::string, std::string>& configs) {
  if (auto reason = broker::InvalidTopicConfigReason(configs)) return reason;
  return broker::InvalidTieringReason(ctx.config, configs);
}

// Maps a failed config update: a refused mutation is INVALID_CONFIG, the
// rest as any metadata write (TopicWriteErrorCode: an unreachable store is
// retriable REQUEST_TIMED_OUT).
void FailUpdate(const Status& st, AlterConfigsResourceResponse& out) {
  ErrorCode code = st.error().code == Errc::kInvalidArgument ? ErrorCode::kInvalidConfig
                                                             : TopicWriteErrorCode(st.error().code);
  Fail(out, code, st.error().message);
}

// Replaces the topic's overrides with `configs` (AlterConfigs).
void Apply(BrokerContext& ctx, const std::string& topic, std::map<std::string, std::string> configs,
           bool validate_only, AlterConfigsResourceResponse& out) {
  if (auto reason = InvalidReason(ctx, configs))
    return Fail(out, ErrorCode::kInvalidConfig, *reason);
  if (validate_only) return;
  Status st = ctx.topics.SetTopicConfigs(topic, std::move(configs));
  if (!st.ok()) FailUpdate(st, out);
}

std::string JoinList(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ",") + i;
  return s;
}

// Applies one incremental op to `configs`; returns an error message or "".
std::string ApplyOp(BrokerContext& ctx, std::map<std::string, std::string>& configs,
                    const protocol::IncrementalAlterConfigsRequest::Config& c) {
  const config::ConfigDef* def = config::FindTopicConfig(c.name);
  if (def == nullptr) return "Unknown topic config name: " + c.name;
  switch (static_cast<Op>(c.config_operation)) {
    case Op::kSet:
      if (!c.value) return "Null value not supported for " + c.name;
      configs[c.name] = *c.value;
      return "";
    case Op::kDelete:
      configs.erase(c.name);
      return "";
    case Op::kAppend:
    case Op::kSubtract: {
      if (def->type != config::ConfigType::kList) return "Config " + c.name + " is not a list";
      auto current = config::SplitList(configs.count(c.name) ? configs[c.name]
                                                             : ctx.config.TopicDefault(*def));
      for (const auto& item : config::SplitList(c.value.value_or(""))) {
        auto it = std::find(current.begin(), current.end(), item);
        if (c.config_operation == static_cast<int8_t>(Op::kAppend) && it == current.end())
          current.push_back(item);
        if (c.config_operation == static_cast<int8_t>(Op::kSubtract) && it != current.end())
          current.erase(it);
      }
      configs[c.name] = JoinList(current);
      return "";
    }
  }
  return "Unknown config operation " + std::to_string(c.config_operation);
}

// IncrementalAlterConfigs of a broker resource: SET and DELETE (the dynamic
// configs are no lists), inside one compare-and-set of the entity's key.
void AlterBrokerIncrementally(BrokerContext& ctx,
                              const protocol::IncrementalAlterConfigsRequest::Resource& r,
                              bool validate_only, AlterConfigsResourceResponse& out) {
  auto entity = BrokerEntity(r.resource_name, out);
  if (!entity) return;
  if (RefusedForAnotherBroker(
          ctx, *entity, r.configs, [](const auto& c) -> const std::string& { return c.name; },
          out)) {
    return;
  }
  auto mutate = [&](std::map<std::string, std::string>& configs) -> Status {
    for (const auto& c : r.configs) {
      if (c.config_operation == static_cast<int8_t>(Op::kSet) && c.value) {
        configs[c.name] = *c.value;
      } else if (c.config_operation == static_cast<int8_t>(Op::kDelete)) {
        configs.erase(c.name);
      } else {
        return MakeError(
            Errc::kInvalidArgument,
            "Only SET with a value and DELETE apply to dynamic broker config " + c.name);
      }
    }
    for (const auto& c : r.configs) {  // a DELETE of a static one too
      if (!config::BrokerConfig::IsDynamic(c.name)) {
        return MakeError(Errc::kInvalidArgument,
                         "Cannot update these configs dynamically: " + c.name);
      }
    }
    if (auto reason = InvalidBrokerConfigsReason(ctx, *entity, configs)) {
      return MakeError(Errc::kInvalidArgument, *reason);
    }
    return Status::Ok();
  };
  if (validate_only) {
    auto current = ctx.metadata->BrokerConfigs(*entity);
    Status st = mutate(current);
    if (!st.ok()) FailUpdate(st, out);
    return;
  }
  Status st = ctx.metadata->UpdateBrokerConfigs(*entity, mutate);
  if (st.ok()) st = ctx.topics.ApplyDynamicBrokerConfigs();  // read-your-writes here
  if (!st.ok()) FailUpdate(st, out);
}

}  // namespace

HandlerResult HandleAlterConfigs(BrokerContext& ctx, net::Request& request) {
  using protocol::AlterConfigsRequest;
  STRATA_ASSIGN_OR_RETURN(AlterConfigsRequest req, DecodeRequest<AlterConfigsRequest>(request));
  protocol::AlterConfigsResponse resp;
  for (const auto& r : req.resources) {
    auto& out = resp.responses.emplace_back();
    if (auto refused = ConfigsRefused(ctx, request, security::AclOperation::kAlterConfigs,
                                      r.resource_type, r.resource_name)) {
      out.resource_type = r.resource_type;
      out.resource_name = r.resource_name;
      Fail(out, *refused, "Authorization failed.");
      continue;
    }
    std::optional<std::string> entity;
    if (r.resource_type == kResourceBroker) {
      if (!(entity = BrokerEntity(r.resource_name, out))) continue;
    } else if (!TopicFor(ctx, r.resource_type, r.resource_name, out)) {
      continue;
    }
    std::map<std::string, std::string> configs;
    bool null_value = false;
    for (const auto& c : r.configs) {
      if (!c.value)
        null_value = true;
      else
        configs[c.name] = *c.value;
    }
    if (null_value) {
      Fail(out, ErrorCode::kInvalidRequest, "Null value not supported in AlterConfigs");
      continue;
    }
    if (entity && RefusedForAnotherBroker(
                      ctx, *entity, configs,
                      [](const auto& c) -> const std::string& { return c.first; }, out)) {
      continue;
    }
    if (entity) {
      if (auto reason = InvalidBrokerConfigsReason(ctx, *entity, configs)) {
        Fail(out, ErrorCode::kInvalidConfig, *reason);
      } else if (!req.validate_only) {
        Status st = ctx.metadata->UpdateBrokerConfigs(*entity, [&](auto& current) {
          current = configs;
          return Status::Ok();
        });
        if (!st.ok()) FailUpdate(st, out);
        st = ctx.topics.ApplyDynamicBrokerConfigs();  // read-your-writes here
        if (!st.ok()) FailUpdate(st, out);
      }
      continue;
    }
    Apply(ctx, r.resource_name, std::move(configs), req.validate_only, out);
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult HandleIncrementalAlterConfigs(BrokerContext& ctx, net::Request& request) {
  using protocol::IncrementalAlterConfigsRequest;
  STRATA_ASSIGN_OR_RETURN(IncrementalAlterConfigsRequest req,
                          DecodeRequest<IncrementalAlterConfigsRequest>(request));
  protocol::IncrementalAlterConfigsResponse resp;
  for (const auto& r : req.resources) {
    auto& out = resp.responses.emplace_back();
    if (auto refused = ConfigsRefused(ctx, request, security::AclOperation::kAlterConfigs,
                                      r.resource_type, r.resource_name)) {
      out.resource_type = r.resource_type;
      out.resource_name = r.resource_name;
      Fail(out, *refused, "Authorization failed.");
      continue;
    }
    if (r.resource_type == kResourceBroker) {
      AlterBrokerIncrementally(ctx, r, req.validate_only, out);
      continue;
    }
    auto info = TopicFor(ctx, r.resource_type, r.resource_name, out);
    if (!info) continue;
    // The ops run on the stored overrides inside a compare-and-set, so a
    // change made meanwhile through another broker is kept, not overwritten.
    auto mutate = [&](std::map<std::string, std::string>& configs) -> Status {
      for (const auto& c : r.configs) {
        std::string error = ApplyOp(ctx, configs, c);
        if (!error.empty()) return MakeError(Errc::kInvalidArgument, error);
      }
      if (auto reason = InvalidReason(ctx, configs))
        return MakeError(Errc::kInvalidArgument, *reason);
      return Status::Ok();
    };
    if (req.validate_only) {
      auto configs = info->record.configs;
      Status st = mutate(configs);
      if (!st.ok()) FailUpdate(st, out);
      continue;
    }
    Status st = ctx.topics.UpdateTopicConfigs(r.resource_name, mutate);
    if (!st.ok()) FailUpdate(st, out);
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
