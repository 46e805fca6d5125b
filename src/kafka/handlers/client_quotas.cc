// DescribeClientQuotas (48) and AlterClientQuotas (49), KIP-546:
// kafka-configs --entity-type users|clients [--entity-name N |
// --entity-default] --describe / --alter --add-config
// 'producer_byte_rate=...,consumer_byte_rate=...,request_percentage=...'.
// The values live in the metadata store (cluster/client_quota_records.h);
// every broker's quota managers follow them. Altering needs ALTER_CONFIGS on
// the cluster, describing DESCRIBE_CONFIGS.
#include "protocol/messages/client_quotas.h"

#include <algorithm>
#include <set>

#include "cluster/metadata.h"
#include "kafka/authorization.h"
#include "kafka/error_mapping.h"
#include "kafka/handlers/handlers.h"
#include "kafka/logger.h"

namespace strata::kafka {

namespace {

using protocol::ErrorCode;

const std::set<std::string>& QuotaKeys() {
  static const std::set<std::string> keys = {"producer_byte_rate", "consumer_byte_rate",
                                             "request_percentage", "controller_mutation_rate"};
  return keys;
}

cluster::QuotaEntity EntityOf(const std::vector<protocol::QuotaEntityData>& data) {
  cluster::QuotaEntity entity;
  for (const auto& e : data) entity.emplace_back(e.entity_type, e.entity_name);
  std::sort(entity.begin(), entity.end());
  return entity;
}

// Why Kafka would refuse this entry, or nullopt.
std::optional<std::string> InvalidEntry(const protocol::AlterClientQuotasRequest::Entry& e) {
  std::set<std::string> types;
  if (e.entity.empty()) return "Invalid empty client quota entity";
  for (const auto& d : e.entity) {
    if (d.entity_type == "ip") return "IP quotas (connection_creation_rate) are not supported";
    if (d.entity_type != "user" && d.entity_type != "client-id") {
      return "Unhandled client quota entity type: " + d.entity_type;
    }
    if (d.entity_name && d.entity_name->empty()) {
      return "Empty " + d.entity_type + " not supported";
    }
    if (!types.insert(d.entity_type).second) {
      return "Duplicate " + d.entity_type + " found in entity";
    }
  }
  for (const auto& op : e.ops) {
    if (!QuotaKeys().contains(op.key)) return "Unknown quota config key: " + op.key;
    if (!op.remove && !(op.value > 0)) {
      return "Invalid value " + std::to_string(op.value) + " for " + op.key + ": must be positive";
    }
  }
  return std::nullopt;
}

}  // namespace

HandlerResult HandleAlterClientQuotas(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(auto req, DecodeRequest<protocol::AlterClientQuotasRequest>(request));
  protocol::AlterClientQuotasResponse resp;
  const bool allowed = AuthorizedOnCluster(ctx, request, security::AclOperation::kAlterConfigs);
  for (const auto& e : req.entries) {
    auto& out = resp.entries.emplace_back();
    out.entity = e.entity;
    auto fail = [&](ErrorCode code, std::string why) {
      out.error_code = Code(code);
      out.error_message = std::move(why);
    };
    if (!allowed) {
      fail(ErrorCode::kClusterAuthorizationFailed, "Cluster authorization failed.");
    } else if (auto invalid = InvalidEntry(e)) {
      fail(ErrorCode::kInvalidRequest, *invalid);
    } else if (ctx.metadata == nullptr) {
      fail(ErrorCode::kCoordinatorNotAvailable, "no cluster metadata");
    } else if (!req.validate_only) {
      Status st = ctx.metadata->UpdateClientQuotas(EntityOf(e.entity), [&](auto& values) {
        for (const auto& op : e.ops) {
          if (op.remove) {
            values.erase(op.key);
          } else {
            values[op.key] = op.value;
          }
        }
        return Status::Ok();
      });
      if (!st.ok()) fail(GenericErrorCode(st.error().code), st.error().message);
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

namespace {

// Whether `entity` matches the request's components (KIP-546 filters).
bool Matches(const cluster::QuotaEntity& entity,
             const std::vector<protocol::DescribeClientQuotasRequest::Component>& components,
             bool strict) {
  constexpr int8_t kExact = 0, kDefault = 1;
  for (const auto& c : components) {
    auto it = std::find_if(entity.begin(), entity.end(),
                           [&](const auto& e) { return e.first == c.entity_type; });
    if (it == entity.end()) return false;
    if (c.match_type == kExact && it->second != c.match) return false;
    if (c.match_type == kDefault && it->second.has_value()) return false;
  }
  return !strict || entity.size() == components.size();
}

}  // namespace

HandlerResult HandleDescribeClientQuotas(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(auto req, DecodeRequest<protocol::DescribeClientQuotasRequest>(request));
  protocol::DescribeClientQuotasResponse resp;
  if (!AuthorizedOnCluster(ctx, request, security::AclOperation::kDescribeConfigs)) {
    resp.error_code = Code(ErrorCode::kClusterAuthorizationFailed);
    resp.error_message = "Cluster authorization failed.";
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  for (const auto& c : req.components) {
    if (c.match_type < 0 || c.match_type > 2 || (c.match_type == 0 && !c.match)) {
      resp.error_code = Code(ErrorCode::kInvalidRequest);
      resp.error_message = "Invalid match type or match for " + c.entity_type;
      return std::optional<Bytes>(EncodeResponse(request, resp));
    }
  }
  resp.entries.emplace();
  if (ctx.metadata == nullptr) return std::optional<Bytes>(EncodeResponse(request, resp));
  for (const auto& record : ctx.metadata->AllClientQuotas()) {
    if (!Matches(record.entity, req.components, req.strict)) continue;
    auto& entry = resp.entries->emplace_back();
    for (const auto& [type, name] : record.entity) entry.entity.push_back({type, name});
    for (const auto& [key, value] : record.values) entry.values.push_back({key, value});
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
