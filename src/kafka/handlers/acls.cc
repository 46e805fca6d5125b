// DescribeAcls (29), CreateAcls (30), DeleteAcls (31): kafka-acls --list,
// --add, --remove. ACLs live in the metadata store, one record per resource
// pattern (cluster/acl_records.h); any broker writes them, and every
// broker's authorizer applies them as soon as its view has them. Listing
// needs DESCRIBE on the cluster, changing them ALTER; without an authorizer
// the answer is SECURITY_DISABLED, as Kafka's.
#include "protocol/messages/acls.h"

#include <fmt/format.h>

#include <map>

#include "broker/acl_authorizer.h"
#include "cluster/metadata.h"
#include "kafka/authorization.h"
#include "kafka/error_mapping.h"
#include "kafka/handlers/handlers.h"
#include "kafka/logger.h"

namespace strata::kafka {

namespace {

using protocol::ErrorCode;
namespace sec = security;

constexpr const char* kNoAuthorizer = "No Authorizer is configured on the broker";

template <class F>
sec::AclBindingFilter FilterOf(const F& f) {
  sec::AclBindingFilter filter;
  filter.resource_type = sec::ResourceTypeFromCode(f.resource_type_filter);
  filter.name = f.resource_name_filter;
  filter.pattern_type = sec::PatternTypeFromCode(f.pattern_type_filter);
  filter.principal = f.principal_filter;
  filter.host = f.host_filter;
  filter.operation = sec::AclOperationFromCode(f.operation);
  filter.permission = sec::AclPermissionFromCode(f.permission_type);
  return filter;
}

// The bindings matching `filter`, from this broker's view.
std::vector<sec::AclBinding> Matching(const BrokerContext& ctx,
                                      const sec::AclBindingFilter& filter) {
  std::vector<sec::AclBinding> out;
  for (auto& b : ctx.metadata->AllAcls()) {
    if (filter.Matches(b)) out.push_back(std::move(b));
  }
  return out;
}

// The error every item of a request gets before any is looked at, or kNone.
std::pair<ErrorCode, std::string> Refused(const BrokerContext& ctx, const net::Request& request,
                                          sec::AclOperation op) {
  if (ctx.authorizer == nullptr || ctx.metadata == nullptr) {
    return {ErrorCode::kSecurityDisabled, kNoAuthorizer};
  }
  if (!AuthorizedOnCluster(ctx, request, op)) {
    return {ErrorCode::kClusterAuthorizationFailed, "Cluster authorization failed."};
  }
  return {ErrorCode::kNone, ""};
}

}  // namespace

HandlerResult HandleDescribeAcls(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(auto req, DecodeRequest<protocol::DescribeAclsRequest>(request));
  protocol::DescribeAclsResponse resp;
  auto [code, why] = Refused(ctx, request, sec::AclOperation::kDescribe);
  const sec::AclBindingFilter filter = FilterOf(req);
  if (code == ErrorCode::kNone) {
    if (auto invalid = filter.Invalid()) {
      code = ErrorCode::kInvalidRequest;
      why = *invalid;
    }
  }
  if (code != ErrorCode::kNone) {
    resp.error_code = Code(code);
    resp.error_message = why;
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  std::map<sec::ResourcePattern, std::vector<protocol::AclDescription>> by_pattern;
  for (const auto& b : Matching(ctx, filter)) {
    by_pattern[b.pattern].push_back({b.entry.principal, b.entry.host,
                                     static_cast<int8_t>(b.entry.operation),
                                     static_cast<int8_t>(b.entry.permission)});
  }
  for (auto& [pattern, acls] : by_pattern) {
    resp.resources.push_back({static_cast<int8_t>(pattern.type), pattern.name,
                              static_cast<int8_t>(pattern.pattern), std::move(acls)});
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult HandleCreateAcls(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(auto req, DecodeRequest<protocol::CreateAclsRequest>(request));
  protocol::CreateAclsResponse resp;
  const auto [refused, refused_why] = Refused(ctx, request, sec::AclOperation::kAlter);
  for (const auto& c : req.creations) {
    auto& out = resp.results.emplace_back();
    if (refused != ErrorCode::kNone) {
      out.error_code = Code(refused);
      out.error_message = refused_why;
      continue;
    }
    sec::AclBinding binding{{sec::ResourceTypeFromCode(c.resource_type), c.resource_name,
                             sec::PatternTypeFromCode(c.resource_pattern_type)},
                            {c.principal, c.host, sec::AclOperationFromCode(c.operation),
                             sec::AclPermissionFromCode(c.permission_type)}};
    if (auto invalid = sec::InvalidForCreate(binding)) {
      out.error_code = Code(ErrorCode::kInvalidRequest);
      out.error_message = *invalid;
      continue;
    }
    Status st = ctx.metadata->UpdateAcls(binding.pattern, [&](auto& entries) {
      if (std::find(entries.begin(), entries.end(), binding.entry) == entries.end()) {
        entries.push_back(binding.entry);  // creating an existing ACL changes nothing
      }
      return Status::Ok();
    });
    if (!st.ok()) {
      out.error_code = Code(GenericErrorCode(st.error().code));
      out.error_message = st.error().message;
      continue;
    }
    Log()->info("ACL created: {} by {}", binding.ToString(), RequestPrincipal(request).ToString());
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

namespace {

// Deletes the bindings of one filter; their descriptions: those the store
// held and this request removed (another broker's concurrent delete of the
// same binding is not reported twice).
protocol::DeleteAclsResponse::FilterResult DeleteMatching(const BrokerContext& ctx,
                                                          const net::Request& request,
                                                          const sec::AclBindingFilter& filter) {
  protocol::DeleteAclsResponse::FilterResult result;
  std::map<sec::ResourcePattern, std::vector<sec::AccessControlEntry>> by_pattern;
  for (auto& b : Matching(ctx, filter)) by_pattern[b.pattern].push_back(std::move(b.entry));
  for (const auto& [pattern, matched] : by_pattern) {
    std::vector<sec::AccessControlEntry> removed;
    Status st = ctx.metadata->UpdateAcls(pattern, [&](auto& stored) {
      removed.clear();  // the update may run again, against the store
      std::erase_if(stored, [&](const sec::AccessControlEntry& e) {
        if (!filter.Matches(sec::AclBinding{pattern, e})) return false;
        removed.push_back(e);
        return true;
      });
      return Status::Ok();
    });
    // Failed: nothing was removed, and the bindings seen carry the error.
    for (const auto& e : st.ok() ? removed : matched) {
      auto& m = result.matching_acls.emplace_back();
      if (!st.ok()) {
        m.error_code = Code(GenericErrorCode(st.error().code));
        m.error_message = st.error().message;
      }
      m.resource_type = static_cast<int8_t>(pattern.type);
      m.resource_name = pattern.name;
      m.pattern_type = static_cast<int8_t>(pattern.pattern);
      m.principal = e.principal;
      m.host = e.host;
      m.operation = static_cast<int8_t>(e.operation);
      m.permission_type = static_cast<int8_t>(e.permission);
      if (st.ok()) {
        Log()->info("ACL deleted: {} by {}", sec::AclBinding{pattern, e}.ToString(),
                    RequestPrincipal(request).ToString());
      }
    }
  }
  return result;
}

}  // namespace

HandlerResult HandleDeleteAcls(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(auto req, DecodeRequest<protocol::DeleteAclsRequest>(request));
  protocol::DeleteAclsResponse resp;
  const auto [refused, refused_why] = Refused(ctx, request, sec::AclOperation::kAlter);
  // Kafka matches on the controller's latest ACLs: one just created through
  // another broker is deleted too. Caught up once for all the filters.
  Status caught_up = Status::Ok();
  if (refused == ErrorCode::kNone && !req.filters.empty()) {
    caught_up = ctx.metadata->CatchUpWithStore();
  }
  for (const auto& f : req.filters) {
    const sec::AclBindingFilter filter = FilterOf(f);
    if (refused != ErrorCode::kNone) {
      resp.filter_results.push_back({Code(refused), refused_why, {}});
    } else if (auto invalid = filter.Invalid()) {
      resp.filter_results.push_back({Code(ErrorCode::kInvalidRequest), *invalid, {}});
    } else if (!caught_up.ok()) {
      resp.filter_results.push_back(
          {Code(GenericErrorCode(caught_up.error().code)), caught_up.error().message, {}});
    } else {
      resp.filter_results.push_back(DeleteMatching(ctx, request, filter));
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
