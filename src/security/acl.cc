// Kafka's ACL model: names, string forms, filter matching and the checks
// CreateAcls, DescribeAcls and DeleteAcls make.
#include "security/acl.h"

#include <string>

#include "security/principal.h"

namespace strata::security {
namespace acl_impl {

// The tables below are indexed by wire code; the enums are dense from 0.
constexpr const char* kResourceTypeEnumNames[] = {
    "UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"};
constexpr const char* kResourceTypeNames[] = {
    "Unknown", "Any", "Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User"};
constexpr const char* kPatternTypeNames[] = {"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"};
constexpr const char* kOperationNames[] = {"UNKNOWN",
                                           "ANY",
                                           "ALL",
                                           "READ",
                                           "WRITE",
                                           "CREATE",
                                           "DELETE",
                                           "ALTER",
                                           "DESCRIBE",
                                           "CLUSTER_ACTION",
                                           "DESCRIBE_CONFIGS",
                                           "ALTER_CONFIGS",
                                           "IDEMPOTENT_WRITE",
                                           "CREATE_TOKENS",
                                           "DESCRIBE_TOKENS",
                                           "TWO_PHASE_COMMIT"};
constexpr const char* kPermissionNames[] = {"UNKNOWN", "ANY", "DENY", "ALLOW"};

template <size_t N>
constexpr bool InTable(const char* const (&)[N], int code) {
  return code >= 0 && code < static_cast<int>(N);
}

template <typename Enum, size_t N>
Enum FromCode(const char* const (&table)[N], int8_t code) {
  return InTable(table, code) ? static_cast<Enum>(code) : Enum::kUnknown;
}

template <typename Enum, size_t N>
const char* NameOf(const char* const (&table)[N], Enum value) {
  int code = static_cast<int>(value);
  return InTable(table, code) ? table[code] : table[0];
}

// Kafka's ResourcePatternFilter.matches.
bool PatternMatches(const AclBindingFilter& f, const ResourcePattern& p) {
  if (f.resource_type != ResourceType::kAny && f.resource_type != p.type) return false;
  const bool any = f.pattern_type == PatternType::kAny;
  const bool match = f.pattern_type == PatternType::kMatch;
  if (!any && !match && f.pattern_type != p.pattern) return false;
  if (!f.name) return true;
  if (any || f.pattern_type == p.pattern) return *f.name == p.name;
  // kMatch: the stored patterns that would apply to the literal name.
  switch (p.pattern) {
    case PatternType::kLiteral:
      return *f.name == p.name || p.name == kWildcard;
    case PatternType::kPrefixed:
      return std::string_view(*f.name).starts_with(p.name);
    default:
      return false;
  }
}

// Kafka's AccessControlEntryFilter.matches.
bool EntryMatches(const AclBindingFilter& f, const AccessControlEntry& e) {
  if (f.principal && *f.principal != e.principal) return false;
  if (f.host && *f.host != e.host) return false;
  if (f.operation != AclOperation::kAny && f.operation != e.operation) return false;
  return f.permission == AclPermission::kAny || f.permission == e.permission;
}

}  // namespace acl_impl

ResourceType ResourceTypeFromCode(int8_t code) {
  return acl_impl::FromCode<ResourceType>(acl_impl::kResourceTypeNames, code);
}
PatternType PatternTypeFromCode(int8_t code) {
  return acl_impl::FromCode<PatternType>(acl_impl::kPatternTypeNames, code);
}
AclOperation AclOperationFromCode(int8_t code) {
  return acl_impl::FromCode<AclOperation>(acl_impl::kOperationNames, code);
}
AclPermission AclPermissionFromCode(int8_t code) {
  return acl_impl::FromCode<AclPermission>(acl_impl::kPermissionNames, code);
}

const char* ResourceTypeEnumName(ResourceType t) {
  return acl_impl::NameOf(acl_impl::kResourceTypeEnumNames, t);
}
const char* ResourceTypeName(ResourceType t) {
  return acl_impl::NameOf(acl_impl::kResourceTypeNames, t);
}
const char* PatternTypeName(PatternType p) {
  return acl_impl::NameOf(acl_impl::kPatternTypeNames, p);
}
const char* AclOperationName(AclOperation op) {
  return acl_impl::NameOf(acl_impl::kOperationNames, op);
}
const char* AclPermissionName(AclPermission p) {
  return acl_impl::NameOf(acl_impl::kPermissionNames, p);
}

std::string ResourcePattern::ToString() const {
  std::string out = "ResourcePattern(resourceType=";
  out.append(ResourceTypeEnumName(type)).append(", name=").append(name);
  out.append(", patternType=").append(PatternTypeName(pattern)).append(")");
  return out;
}

std::string AccessControlEntry::ToString() const {
  std::string out = "(principal=";
  out.append(principal).append(", host=").append(host);
  out.append(", operation=").append(AclOperationName(operation));
  out.append(", permissionType=").append(AclPermissionName(permission)).append(")");
  return out;
}

std::string AclBinding::ToString() const {
  return "(pattern=" + pattern.ToString() + ", entry=" + entry.ToString() + ")";
}

bool AclBindingFilter::Matches(const AclBinding& binding) const {
  return acl_impl::PatternMatches(*this, binding.pattern) &&
         acl_impl::EntryMatches(*this, binding.entry);
}

// Kafka refuses filters with UNKNOWN parts (AclControlManager.validateFilter);
// ANY and MATCH are what filters are for.
std::optional<std::string> AclBindingFilter::Invalid() const {
  if (resource_type == ResourceType::kUnknown) return "Unknown patternFilter: resource type";
  if (pattern_type == PatternType::kUnknown) return "Unknown patternFilter: pattern type";
  if (operation == AclOperation::kUnknown) return "Unknown entryFilter: operation";
  if (permission == AclPermission::kUnknown) return "Unknown entryFilter: permission type";
  return std::nullopt;
}

// The broker's checks (AclApis.handleCreateAcls) then the controller's
// (AclControlManager.validateNewAcl), in Kafka's order and with its messages.
std::optional<std::string> InvalidForCreate(const AclBinding& binding) {
  const ResourcePattern& p = binding.pattern;
  const AccessControlEntry& e = binding.entry;
  if (p.type == ResourceType::kCluster && p.name != kClusterResourceName) {
    return "The only valid name for the CLUSTER resource is " + std::string(kClusterResourceName);
  }
  if (p.name.empty()) return "Invalid empty resource name";
  if (p.type == ResourceType::kUnknown || p.type == ResourceType::kAny) {
    return std::string("Invalid resourceType ") + ResourceTypeEnumName(p.type);
  }
  if (p.pattern != PatternType::kLiteral && p.pattern != PatternType::kPrefixed) {
    return std::string("Invalid patternType ") + PatternTypeName(p.pattern);
  }
  if (e.operation == AclOperation::kUnknown || e.operation == AclOperation::kAny) {
    return std::string("Invalid operation ") + AclOperationName(e.operation);
  }
  if (e.permission != AclPermission::kAllow && e.permission != AclPermission::kDeny) {
    return std::string("Invalid permissionType ") + AclPermissionName(e.permission);
  }
  auto principal = ParsePrincipal(e.principal);
  if (!principal.ok()) return "Invalid principal: " + principal.error().message;
  return std::nullopt;
}

}  // namespace strata::security
