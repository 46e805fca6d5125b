// StandardAuthorizer's decision (Kafka's StandardAuthorizerData.findAclRule
// and findResult) and Authorizer.authorizeByResourceType, over AclSnapshot.
#include "security/authorizer.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <utility>

namespace strata::security {
namespace authorizer_impl {

// The name Kafka's Authorizer.authorizeByResourceType first authorizes
// against: super users pass there, and so does everyone under
// allow.everyone.if.no.acl.found when no ACL applies to that name.
constexpr std::string_view kProbeName = "hardcode";

enum class Verdict { kNone, kAllow, kDeny };

// An ACL's principal applies to the session principal when it names it or
// is the wildcard "User:*" (Kafka matches {principal, User:*}, whatever the
// session principal's type). Compared piecewise to avoid building a string.
bool PrincipalMatches(std::string_view acl, const KafkaPrincipal& p) {
  if (acl == kWildcardPrincipal) return true;
  return acl.size() == p.type.size() + 1 + p.name.size() && acl.starts_with(p.type) &&
         acl[p.type.size()] == ':' && acl.ends_with(p.name);
}

bool HostMatches(std::string_view acl, std::string_view host) {
  return acl == kWildcard || acl == host;
}

// Whether an ALLOW rule for `granted` allows `op`: the same operation, or one
// that implies it (READ/WRITE/DELETE/ALTER imply DESCRIBE; ALTER_CONFIGS
// implies DESCRIBE_CONFIGS). ALL is handled by the caller.
bool AllowCovers(AclOperation granted, AclOperation op) {
  switch (op) {
    case AclOperation::kDescribe:
      return granted == AclOperation::kDescribe || granted == AclOperation::kRead ||
             granted == AclOperation::kWrite || granted == AclOperation::kDelete ||
             granted == AclOperation::kAlter;
    case AclOperation::kDescribeConfigs:
      return granted == AclOperation::kDescribeConfigs || granted == AclOperation::kAlterConfigs;
    default:
      return granted == op;
  }
}

// Kafka's findResult: what one entry, already known to apply to the
// resource, says about the request. Implied operations only widen ALLOW
// rules: a DENY for READ does not deny DESCRIBE.
Verdict Decide(const AccessControlEntry& e, const KafkaPrincipal& principal, std::string_view host,
               AclOperation op) {
  if (!PrincipalMatches(e.principal, principal) || !HostMatches(e.host, host)) {
    return Verdict::kNone;
  }
  const bool allow = e.permission == AclPermission::kAllow;
  if (e.operation != AclOperation::kAll) {
    if (allow ? !AllowCovers(e.operation, op) : e.operation != op) return Verdict::kNone;
  }
  return allow ? Verdict::kAllow : Verdict::kDeny;
}

std::string RuleReason(const char* what, const AclBinding& b) {
  return std::string(what) + " rule " + b.entry.ToString() + " on " + b.pattern.ToString();
}

std::string_view Trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

// The ALLOW and DENY rules for one principal, host and operation over every
// resource of a type, as authorizeByResourceType gathers them. Implied
// operations do not count here, as in Kafka.
struct TypeRules {
  bool wildcard_allow = false;
  bool wildcard_deny = false;
  std::unordered_set<std::string_view> deny_literal;
  std::unordered_set<std::string_view> deny_prefixed;
  std::vector<const ResourcePattern*> allows;

  // Stops the scan (returns false) at a wildcard DENY, which decides.
  bool Add(const AclBinding& b) {
    const bool literal = b.pattern.pattern == PatternType::kLiteral;
    if (b.entry.permission == AclPermission::kDeny) {
      if (literal && b.pattern.name == kWildcard) {
        wildcard_deny = true;
        return false;
      }
      (literal ? deny_literal : deny_prefixed).insert(b.pattern.name);
    } else if (b.entry.permission == AclPermission::kAllow) {
      if (literal && b.pattern.name == kWildcard) {
        wildcard_allow = true;
      } else {
        allows.push_back(&b.pattern);
      }
    }
    return true;
  }

  // An ALLOW counts unless a literal DENY names the same resource or a
  // prefixed DENY covers it (a non-empty prefix of its name).
  bool AnyAllowStands() const {
    if (wildcard_deny) return false;
    if (wildcard_allow) return true;
    for (const ResourcePattern* p : allows) {
      std::string_view name = p->name;
      if (p->pattern == PatternType::kLiteral && deny_literal.contains(name)) continue;
      bool dominated = false;
      for (size_t len = 1; len <= name.size() && !dominated; ++len) {
        dominated = deny_prefixed.contains(name.substr(0, len));
      }
      if (!dominated) return true;
    }
    return false;
  }
};

}  // namespace authorizer_impl

AclSnapshot::AclSnapshot(std::vector<AclBinding> bindings) : bindings_(std::move(bindings)) {
  for (uint32_t i = 0; i < bindings_.size(); ++i) {
    const ResourcePattern& p = bindings_[i].pattern;
    if (p.type == ResourceType::kUnknown || p.type == ResourceType::kAny) continue;
    auto type = static_cast<size_t>(p.type);
    if (type >= kTypes) continue;
    if (p.pattern == PatternType::kLiteral) index_[type].literal.push_back(i);
    if (p.pattern == PatternType::kPrefixed) index_[type].prefixed.push_back(i);
  }
  auto by_name = [this](uint32_t a, uint32_t b) {
    return bindings_[a].pattern.name < bindings_[b].pattern.name;
  };
  for (TypeIndex& t : index_) {
    std::stable_sort(t.literal.begin(), t.literal.end(), by_name);
    std::stable_sort(t.prefixed.begin(), t.prefixed.end(), by_name);
  }
}

const AclSnapshot::TypeIndex* AclSnapshot::IndexOf(ResourceType type) const {
  auto t = static_cast<size_t>(type);
  if (type == ResourceType::kUnknown || type == ResourceType::kAny || t >= kTypes) return nullptr;
  return &index_[t];
}

bool AclSnapshot::VisitNamed(const std::vector<uint32_t>& sorted, std::string_view name,
                             const std::function<bool(const AclBinding&)>& fn) const {
  auto first = std::lower_bound(
      sorted.begin(), sorted.end(), name,
      [this](uint32_t i, std::string_view v) { return bindings_[i].pattern.name < v; });
  for (auto it = first; it != sorted.end() && bindings_[*it].pattern.name == name; ++it) {
    if (!fn(bindings_[*it])) return false;
  }
  return true;
}

// The prefixes of `name` present in `sorted`, longest first. The largest key
// <= `limit` is either a prefix of it (visit it, then look for shorter ones
// below it) or diverges from it at some position, in which case no longer
// prefix of `limit` can be a key, and the search continues below the common
// part. Each step is a binary search, and `limit` shrinks every step.
bool AclSnapshot::VisitPrefixes(const std::vector<uint32_t>& sorted, std::string_view name,
                                const std::function<bool(const AclBinding&)>& fn) const {
  auto name_of = [this](uint32_t i) -> const std::string& { return bindings_[i].pattern.name; };
  std::string_view limit = name;
  while (true) {
    auto after = std::upper_bound(sorted.begin(), sorted.end(), limit,
                                  [&](std::string_view v, uint32_t i) { return v < name_of(i); });
    if (after == sorted.begin()) return true;
    std::string_view key = name_of(*(after - 1));
    if (limit.starts_with(key)) {
      auto first = std::lower_bound(sorted.begin(), after, key,
                                    [&](uint32_t i, std::string_view v) { return name_of(i) < v; });
      for (auto it = first; it != after; ++it) {
        if (!fn(bindings_[*it])) return false;
      }
      if (key.empty()) return true;
      limit = limit.substr(0, key.size() - 1);
    } else {
      auto diverge = std::mismatch(key.begin(), key.end(), limit.begin(), limit.end());
      limit = limit.substr(0, static_cast<size_t>(diverge.second - limit.begin()));
    }
  }
}

void AclSnapshot::ForEachMatching(ResourceType type, std::string_view name,
                                  const std::function<bool(const AclBinding&)>& fn) const {
  const TypeIndex* index = IndexOf(type);
  if (index == nullptr) return;
  if (!VisitNamed(index->literal, name, fn)) return;
  if (name != kWildcard && !VisitNamed(index->literal, kWildcard, fn)) return;
  VisitPrefixes(index->prefixed, name, fn);
}

void AclSnapshot::ForEachOfType(ResourceType type,
                                const std::function<bool(const AclBinding&)>& fn) const {
  const TypeIndex* index = IndexOf(type);
  if (index == nullptr) return;
  for (const std::vector<uint32_t>* v : {&index->literal, &index->prefixed}) {
    for (uint32_t i : *v) {
      if (!fn(bindings_[i])) return;
    }
  }
}

Result<std::vector<KafkaPrincipal>> ParseSuperUsers(std::string_view text) {
  std::vector<KafkaPrincipal> out;
  while (!text.empty()) {
    size_t semi = text.find(';');
    std::string_view item = authorizer_impl::Trim(text.substr(0, semi));
    text = semi == std::string_view::npos ? std::string_view() : text.substr(semi + 1);
    if (item.empty()) continue;
    auto principal = ParsePrincipal(item);
    if (!principal.ok()) {
      return MakeError(Errc::kInvalidArgument, "super.users: " + principal.error().message);
    }
    out.push_back(std::move(principal).value());
  }
  return out;
}

AuthorizationResult Authorize(const AclSnapshot& acls, const AuthorizerSettings& settings,
                              const KafkaPrincipal& principal, std::string_view host,
                              AclOperation op, ResourceType type, std::string_view name) {
  using authorizer_impl::Verdict;
  for (const KafkaPrincipal& super_user : settings.super_users) {
    if (super_user == principal) return {true, "super user"};
  }
  struct Scan {
    const KafkaPrincipal* principal;
    std::string_view host;
    AclOperation op;
    bool found = false;  // some binding applies to the resource, whoever it is for
    const AclBinding* allow = nullptr;
    const AclBinding* deny = nullptr;
  } scan{&principal, host, op};
  // One pointer captured, so std::function holds the lambda without allocating.
  Scan* s = &scan;
  acls.ForEachMatching(type, name, [s](const AclBinding& b) {
    s->found = true;
    switch (authorizer_impl::Decide(b.entry, *s->principal, s->host, s->op)) {
      case Verdict::kDeny:
        s->deny = &b;
        return false;  // DENY wins; nothing else can change the answer
      case Verdict::kAllow:
        if (s->allow == nullptr) s->allow = &b;
        return true;
      case Verdict::kNone:
        return true;
    }
    return true;
  });
  if (scan.deny != nullptr) return {false, authorizer_impl::RuleReason("DENY", *scan.deny)};
  if (scan.allow != nullptr) return {true, authorizer_impl::RuleReason("ALLOW", *scan.allow)};
  if (scan.found) return {false, "no ALLOW rule matched"};
  const bool allow = settings.allow_everyone_if_no_acl_found;
  return {allow, std::string("no ACL found and allow.everyone.if.no.acl.found=") +
                     (allow ? "true" : "false")};
}

bool AuthorizeAny(const AclSnapshot& acls, const AuthorizerSettings& settings,
                  const KafkaPrincipal& principal, std::string_view host, AclOperation op,
                  ResourceType type) {
  if (op == AclOperation::kUnknown || op == AclOperation::kAny || type == ResourceType::kUnknown ||
      type == ResourceType::kAny) {
    return false;  // Kafka refuses these (SecurityUtils.authorizeByResourceTypeCheckArgs)
  }
  if (Authorize(acls, settings, principal, host, op, type, authorizer_impl::kProbeName).allowed) {
    return true;
  }
  authorizer_impl::TypeRules rules;
  authorizer_impl::TypeRules* r = &rules;
  acls.ForEachOfType(type, [r, &principal, host, op](const AclBinding& b) {
    const AccessControlEntry& e = b.entry;
    if (!authorizer_impl::HostMatches(e.host, host)) return true;
    if (!authorizer_impl::PrincipalMatches(e.principal, principal)) return true;
    if (e.operation != op && e.operation != AclOperation::kAll) return true;
    return r->Add(b);
  });
  return rules.AnyAllowStands();
}

}  // namespace strata::security
