#pragma once
// AclAuthorizer: the broker's authorizer when authorizer.class.name names
// Kafka's StandardAuthorizer. It answers with StandardAuthorizer's rules
// (security/authorizer.h: super.users, DENY wins, implied DESCRIBE,
// allow.everyone.if.no.acl.found) over the ACLs of the metadata store. Its
// snapshot is rebuilt whenever this broker's view applies a change under
// acls/, so an ACL made through any broker holds here as soon as the view
// has it. Every denial goes to the "authorizer" log.
//
// Thread-safety: Authorize may be called from any thread (it reads the
// current snapshot, an atomically swapped shared_ptr).
#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "cluster/metadata.h"
#include "config/broker_config.h"
#include "security/authorizer.h"

namespace strata::broker {

class AclAuthorizer {
 public:
  // nullptr when authorizer.class.name is empty (everything is allowed);
  // kInvalidArgument for a class this broker does not provide or a bad
  // super.users.
  static Result<std::unique_ptr<AclAuthorizer>> Create(const config::BrokerConfig& config,
                                                       cluster::Metadata& metadata);
  ~AclAuthorizer();

  // Whether `principal` from `host` may do `op` on the resource. A denial
  // is logged naming `api` unless `log_denial` is false (filtering of lists,
  // as Kafka logs those at debug).
  bool Authorize(const security::KafkaPrincipal& principal, std::string_view host,
                 security::AclOperation op, security::ResourceType type, std::string_view name,
                 std::string_view api, bool log_denial = true) const;
  // Whether `op` is allowed on some resource of `type` (an idempotent
  // producer with WRITE on any topic).
  bool AuthorizeAny(const security::KafkaPrincipal& principal, std::string_view host,
                    security::AclOperation op, security::ResourceType type) const;

  std::shared_ptr<const security::AclSnapshot> snapshot() const { return snapshot_.load(); }

 private:
  AclAuthorizer(cluster::Metadata& metadata, security::AuthorizerSettings settings);
  void Rebuild();

  cluster::Metadata& metadata_;
  const security::AuthorizerSettings settings_;
  std::atomic<std::shared_ptr<const security::AclSnapshot>> snapshot_;
  int subscription_ = -1;
};

}  // namespace strata::broker
