// DescribeConfigs (32): every topic or broker config with its value, source
// and (on request) synonyms and documentation.
#include "protocol/messages/describe_configs.h"

#include "kafka/authorization.h"
#include "kafka/config_entries.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"

namespace strata::kafka {

namespace {

using protocol::DescribeConfigsRequest;
using protocol::DescribeConfigsResponse;
using protocol::ErrorCode;

DescribeConfigsResponse::Config ToWire(const ConfigEntry& e, const DescribeConfigsRequest& req) {
  DescribeConfigsResponse::Config c;
  // Passwords never leave the broker: Kafka answers them sensitive, with
  // null values.
  const bool sensitive = e.sensitive || e.type == config::ConfigType::kPassword;
  c.name = e.name;
  c.value = sensitive ? std::nullopt : std::optional<std::string>(e.value);
  c.read_only = e.read_only;
  c.is_default = e.source == ConfigSource::kDefaultConfig;
  c.config_source = static_cast<int8_t>(e.source);
  c.is_sensitive = sensitive;
  if (req.include_synonyms) {
    for (const auto& s : e.synonyms) {
      c.synonyms.push_back({s.name, sensitive ? std::nullopt : std::optional<std::string>(s.value),
                            static_cast<int8_t>(s.source)});
    }
  }
  c.config_type = static_cast<int8_t>(e.type);
  if (req.include_documentation) c.documentation = e.doc;
  return c;
}

void DescribeOne(BrokerContext& ctx, const net::Request& request, const DescribeConfigsRequest& req,
                 const DescribeConfigsRequest::Resource& in,
                 DescribeConfigsResponse::ResourceResult& out) {
  out.resource_type = in.resource_type;
  out.resource_name = in.resource_name;
  if (auto refused = ConfigsRefused(ctx, request, security::AclOperation::kDescribeConfigs,
                                    in.resource_type, in.resource_name)) {
    out.error_code = Code(*refused);
    out.error_message = "Authorization failed.";
    return;
  }
  std::vector<ConfigEntry> entries;
  if (in.resource_type == kResourceTopic) {
    auto info = ctx.topics.GetTopicInfo(in.resource_name);
    if (!info) {
      out.error_code = Code(ErrorCode::kUnknownTopicOrPartition);
      out.error_message = "Topic '" + in.resource_name + "' does not exist.";
      return;
    }
    entries = TopicConfigEntries(ctx.config, info->record.configs);
  } else if (in.resource_type == kResourceBroker) {
    if (in.resource_name.empty()) {
      entries = DefaultBrokerConfigEntries(ctx.config);  // --entity-default
    } else if (in.resource_name != std::to_string(ctx.config.node_id())) {
      out.error_code = Code(ErrorCode::kInvalidRequest);
      out.error_message = "Unexpected broker id, expected " + std::to_string(ctx.config.node_id());
      return;
    } else {
      entries = BrokerConfigEntries(ctx.config);
    }
  } else if (in.resource_type == kResourceBrokerLogger) {
    return;  // no per-logger levels exposed yet
  } else {
    out.error_code = Code(ErrorCode::kInvalidRequest);
    out.error_message = "Unsupported resource type " + std::to_string(in.resource_type);
    return;
  }
  for (const auto& e : entries) {
    if (in.configuration_keys) {
      const auto& keys = *in.configuration_keys;
      if (std::find(keys.begin(), keys.end(), e.name) == keys.end()) continue;
    }
    out.configs.push_back(ToWire(e, req));
  }
}

}  // namespace

HandlerResult HandleDescribeConfigs(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(DescribeConfigsRequest req,
                          DecodeRequest<DescribeConfigsRequest>(request));
  DescribeConfigsResponse resp;
  for (const auto& r : req.resources)
    DescribeOne(ctx, request, req, r, resp.results.emplace_back());
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
