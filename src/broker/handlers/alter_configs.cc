// AlterConfigs (33, replaces a topic's overrides) and IncrementalAlterConfigs
// (44, SET/DELETE/APPEND/SUBTRACT per key). Broker configs are static in
// Strata: altering them is refused with a message saying so.

#include "protocol/messages/alter_configs.h"

#include "broker/config_entries.h"
#include "broker/handlers/handlers.h"
#include "broker/topic_validation.h"
#include "config/config_def.h"
#include "protocol/error_code.h"
#include "protocol/messages/incremental_alter_configs.h"

namespace strata::broker {

namespace {

using protocol::AlterConfigsResourceResponse;
using protocol::ErrorCode;

enum class Op : int8_t { kSet = 0, kDelete = 1, kAppend = 2, kSubtract = 3 };

void Fail(AlterConfigsResourceResponse& out, ErrorCode code, std::string message) {
  out.error_code = Code(code);
  out.error_message = std::move(message);
}

// Checks the resource is a topic that exists; fills `out` on failure.
std::shared_ptr<const TopicInfo> TopicFor(BrokerContext& ctx, int8_t type, const std::string& name,
                                          AlterConfigsResourceResponse& out) {
  out.resource_type = type;
  out.resource_name = name;
  if (type == kResourceBroker || type == kResourceBrokerLogger) {
    Fail(out, ErrorCode::kInvalidRequest,
         "Strata broker configs are static: change server.properties and restart");
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

// Why `configs` may not be a topic's overrides, or nullopt.
std::optional<std::string> InvalidReason(BrokerContext& ctx,
                                         const std::map<std::string, std::string>& configs) {
  if (auto reason = InvalidTopicConfigReason(configs)) return reason;
  return InvalidTieringReason(ctx.config, configs);
}

// Maps a failed config update: a refused mutation is INVALID_CONFIG; an
// unreachable metadata store is retriable REQUEST_TIMED_OUT.
void FailUpdate(const Status& st, AlterConfigsResourceResponse& out) {
  switch (st.error().code) {
    case Errc::kInvalidArgument:
      return Fail(out, ErrorCode::kInvalidConfig, st.error().message);
    case Errc::kNotFound:
      return Fail(out, ErrorCode::kUnknownTopicOrPartition, st.error().message);
    case Errc::kUnavailable:
      return Fail(out, ErrorCode::kRequestTimedOut, st.error().message);
    default:
      return Fail(out, ErrorCode::kKafkaStorageError, st.error().message);
  }
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

}  // namespace

HandlerResult HandleAlterConfigs(BrokerContext& ctx, net::Request& request) {
  using protocol::AlterConfigsRequest;
  STRATA_ASSIGN_OR_RETURN(AlterConfigsRequest req, DecodeRequest<AlterConfigsRequest>(request));
  protocol::AlterConfigsResponse resp;
  for (const auto& r : req.resources) {
    auto& out = resp.responses.emplace_back();
    if (!TopicFor(ctx, r.resource_type, r.resource_name, out)) continue;
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

}  // namespace strata::broker
