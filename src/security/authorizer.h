#pragma once
// The decision Kafka's StandardAuthorizer makes (KIP-801), over an immutable
// snapshot of ACL bindings: super users may do anything; a matching DENY wins
// over any ALLOW; READ, WRITE, DELETE and ALTER imply DESCRIBE and
// ALTER_CONFIGS implies DESCRIBE_CONFIGS (for ALLOW rules only); a resource no
// binding applies to gets allow.everyone.if.no.acl.found.
//
// Thread-safety: an AclSnapshot never changes once built, so any number of
// threads may query one concurrently; a new set of ACLs is a new snapshot
// (the broker swaps a shared_ptr). The free functions are pure.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "security/acl.h"
#include "security/principal.h"

namespace strata::security {

// ACL bindings indexed for authorization: per resource type, literal
// bindings by exact name (the wildcard "*" among them) and prefixed bindings
// sorted by prefix, so the prefixes of a name are found in O(k log n) for k
// candidate prefixes rather than by a scan. Bindings with a resource type or
// pattern type that can never apply (UNKNOWN, ANY, MATCH) are kept in
// bindings() but not indexed.
class AclSnapshot {
 public:
  AclSnapshot() = default;
  explicit AclSnapshot(std::vector<AclBinding> bindings);

  const std::vector<AclBinding>& bindings() const { return bindings_; }

  // Calls `fn` with every binding whose pattern applies to the literal
  // resource (type, name): literal bindings of `name`, literal "*" bindings,
  // and prefixed bindings whose prefix `name` starts with. Stops as soon as
  // `fn` returns false.
  void ForEachMatching(ResourceType type, std::string_view name,
                       const std::function<bool(const AclBinding&)>& fn) const;
  // Calls `fn` with every indexed binding of `type`, literal then prefixed;
  // stops as soon as `fn` returns false.
  void ForEachOfType(ResourceType type, const std::function<bool(const AclBinding&)>& fn) const;

 private:
  // Indices into bindings_, sorted by pattern name.
  struct TypeIndex {
    std::vector<uint32_t> literal;
    std::vector<uint32_t> prefixed;
  };
  static constexpr size_t kTypes = static_cast<size_t>(ResourceType::kUser) + 1;

  const TypeIndex* IndexOf(ResourceType type) const;
  // Calls fn for every binding in `sorted` named exactly `name`.
  bool VisitNamed(const std::vector<uint32_t>& sorted, std::string_view name,
                  const std::function<bool(const AclBinding&)>& fn) const;
  bool VisitPrefixes(const std::vector<uint32_t>& sorted, std::string_view name,
                     const std::function<bool(const AclBinding&)>& fn) const;

  std::vector<AclBinding> bindings_;
  std::array<TypeIndex, kTypes> index_;
};

struct AuthorizerSettings {
  // super.users: principals allowed everything, whatever the ACLs say.
  std::vector<KafkaPrincipal> super_users;
  // allow.everyone.if.no.acl.found: the answer for a resource no ACL applies to.
  bool allow_everyone_if_no_acl_found = false;
};

// super.users, "User:admin;User:broker": semicolon-separated, whitespace
// around each trimmed, empty entries skipped. kInvalidArgument naming the
// entry that is not "Type:name".
Result<std::vector<KafkaPrincipal>> ParseSuperUsers(std::string_view text);

struct AuthorizationResult {
  bool allowed = false;
  // Why, for the audit log: "super user", "ALLOW rule ...", "DENY rule ...",
  // "no ALLOW rule matched", "no ACL found and
  // allow.everyone.if.no.acl.found=false".
  std::string reason;
};

// Whether `principal` connected from `host` may do `op` on the literal
// resource (type, name).
AuthorizationResult Authorize(const AclSnapshot& acls, const AuthorizerSettings& settings,
                              const KafkaPrincipal& principal, std::string_view host,
                              AclOperation op, ResourceType type, std::string_view name);

// Whether `op` is allowed on at least one resource of `type`, as Kafka's
// Authorizer.authorizeByResourceType (which StandardAuthorizer inherits):
// used, for example, to let a producer with WRITE on some topic be
// idempotent. False for an UNKNOWN or ANY `op` or `type`.
bool AuthorizeAny(const AclSnapshot& acls, const AuthorizerSettings& settings,
                  const KafkaPrincipal& principal, std::string_view host, AclOperation op,
                  ResourceType type);

}  // namespace strata::security
