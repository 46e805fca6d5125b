#pragma once
// Kafka's ACL model: resource patterns, access control entries, their
// bindings, and the filters DescribeAcls / DeleteAcls select bindings with.
// Every enum carries Kafka's wire code (org.apache.kafka.common.acl and
// .resource), so a request's int8 maps straight onto it; names print as
// Kafka's enums do ("READ", "TOPIC", "LITERAL", "ALLOW").
//
// Plain value types and pure functions: safe to copy and share across threads.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata::security {

enum class ResourceType : int8_t {
  kUnknown = 0,
  kAny = 1,
  kTopic = 2,
  kGroup = 3,
  kCluster = 4,
  kTransactionalId = 5,
  kDelegationToken = 6,
  kUser = 7,
};

enum class PatternType : int8_t {
  kUnknown = 0,
  kAny = 1,    // filters only: any pattern type
  kMatch = 2,  // filters only: the patterns that would apply to a name
  kLiteral = 3,
  kPrefixed = 4,
};

enum class AclOperation : int8_t {
  kUnknown = 0,
  kAny = 1,  // filters only
  kAll = 2,
  kRead = 3,
  kWrite = 4,
  kCreate = 5,
  kDelete = 6,
  kAlter = 7,
  kDescribe = 8,
  kClusterAction = 9,
  kDescribeConfigs = 10,
  kAlterConfigs = 11,
  kIdempotentWrite = 12,
  kCreateTokens = 13,
  kDescribeTokens = 14,
  kTwoPhaseCommit = 15,
};

enum class AclPermission : int8_t {
  kUnknown = 0,
  kAny = 1,  // filters only
  kDeny = 2,
  kAllow = 3,
};

// The name of the only CLUSTER resource (Kafka's Resource.CLUSTER_NAME).
inline constexpr std::string_view kClusterResourceName = "kafka-cluster";
// The literal resource name and host that match every name or host.
inline constexpr std::string_view kWildcard = "*";
// The principal that matches every principal.
inline constexpr std::string_view kWildcardPrincipal = "User:*";

// Wire code -> enum; codes Kafka does not define map to kUnknown, as Kafka's
// fromCode does.
ResourceType ResourceTypeFromCode(int8_t code);
PatternType PatternTypeFromCode(int8_t code);
AclOperation AclOperationFromCode(int8_t code);
AclPermission AclPermissionFromCode(int8_t code);

// Upper-case names as Kafka's enums print: "TOPIC", "TRANSACTIONAL_ID",
// "PREFIXED", "IDEMPOTENT_WRITE", "ALLOW".
const char* ResourceTypeEnumName(ResourceType t);
const char* PatternTypeName(PatternType p);
const char* AclOperationName(AclOperation op);
const char* AclPermissionName(AclPermission p);
// The resource type as Kafka's audit log names it (SecurityUtils.resourceTypeName):
// "Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User".
const char* ResourceTypeName(ResourceType t);

// What an ACL applies to: a literal name ("*" for every name) or a name prefix.
struct ResourcePattern {
  ResourceType type = ResourceType::kUnknown;
  std::string name;
  PatternType pattern = PatternType::kLiteral;

  // "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)".
  std::string ToString() const;
  auto operator<=>(const ResourcePattern&) const = default;
};

// Who may (or may not) do what from where.
struct AccessControlEntry {
  std::string principal;  // "User:alice", or "User:*" for every principal
  std::string host;       // "*" or a client address
  AclOperation operation = AclOperation::kUnknown;
  AclPermission permission = AclPermission::kUnknown;

  // "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)".
  std::string ToString() const;
  auto operator<=>(const AccessControlEntry&) const = default;
};

struct AclBinding {
  ResourcePattern pattern;
  AccessControlEntry entry;

  // "(pattern=ResourcePattern(...), entry=(principal=...))".
  std::string ToString() const;
  auto operator<=>(const AclBinding&) const = default;
};

// Selects bindings, as Kafka's AclBindingFilter (a ResourcePatternFilter and
// an AccessControlEntryFilter). An unset optional and the ANY values match
// everything; the default filter matches every binding.
struct AclBindingFilter {
  ResourceType resource_type = ResourceType::kAny;
  // nullopt: every name. With kMatch, the bindings that would apply to this
  // literal name; otherwise the bindings of exactly this name ("*" selects
  // only the wildcard bindings).
  std::optional<std::string> name;
  PatternType pattern_type = PatternType::kAny;
  std::optional<std::string> principal;
  std::optional<std::string> host;
  AclOperation operation = AclOperation::kAny;
  AclPermission permission = AclPermission::kAny;

  bool Matches(const AclBinding& binding) const;
  // Why DescribeAcls / DeleteAcls refuse this filter (an UNKNOWN field), or
  // nullopt when it is usable.
  std::optional<std::string> Invalid() const;
};

// Why CreateAcls refuses `binding` (INVALID_REQUEST), or nullopt: a resource
// type, pattern type, operation or permission that is UNKNOWN, ANY or MATCH;
// an empty name; a CLUSTER resource not named "kafka-cluster"; a principal
// that is not "Type:name". ALL is a valid operation.
std::optional<std::string> InvalidForCreate(const AclBinding& binding);

}  // namespace strata::security
