#include "broker/acl_authorizer.h"

#include <fmt/format.h>

#include "base/log.h"

namespace strata::broker {

namespace {

auto AuthorizerLog() { return log::Get("authorizer"); }

bool KnownAuthorizer(const std::string& name) {
  return name == "org.apache.kafka.metadata.authorizer.StandardAuthorizer" ||
         name == "kafka.security.authorizer.AclAuthorizer";
}

}  // namespace

Result<std::unique_ptr<AclAuthorizer>> AclAuthorizer::Create(const config::BrokerConfig& config,
                                                             cluster::Metadata& metadata) {
  const std::string& name = config.Get("authorizer.class.name");
  if (name.empty()) return std::unique_ptr<AclAuthorizer>();
  if (!KnownAuthorizer(name)) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("authorizer.class.name: {} is not available (use "
                                 "org.apache.kafka.metadata.authorizer.StandardAuthorizer)",
                                 name));
  }
  security::AuthorizerSettings settings;
  auto supers = security::ParseSuperUsers(config.Get("super.users"));
  if (!supers.ok()) {
    return MakeError(Errc::kInvalidArgument, "super.users: " + supers.error().message);
  }
  settings.super_users = std::move(supers).value();
  settings.allow_everyone_if_no_acl_found = config.GetBool("allow.everyone.if.no.acl.found");
  std::unique_ptr<AclAuthorizer> out(new AclAuthorizer(metadata, std::move(settings)));
  AclAuthorizer* raw = out.get();
  const std::string prefix = metadata.keys().AclsPrefix();
  out->subscription_ =
      metadata.view().Subscribe([raw, prefix](const std::vector<std::string>& keys, bool reloaded) {
        bool touched = reloaded;
        for (const auto& k : keys) touched = touched || k.starts_with(prefix);
        if (touched) raw->Rebuild();
      });
  out->Rebuild();
  return out;
}

AclAuthorizer::AclAuthorizer(cluster::Metadata& metadata, security::AuthorizerSettings settings)
    : metadata_(metadata), settings_(std::move(settings)) {}

AclAuthorizer::~AclAuthorizer() {
  if (subscription_ >= 0) metadata_.view().Unsubscribe(subscription_);
}

void AclAuthorizer::Rebuild() {
  snapshot_.store(std::make_shared<const security::AclSnapshot>(metadata_.AllAcls()));
}

bool AclAuthorizer::Authorize(const security::KafkaPrincipal& principal, std::string_view host,
                              security::AclOperation op, security::ResourceType type,
                              std::string_view name, std::string_view api, bool log_denial) const {
  auto snapshot = snapshot_.load();
  security::AuthorizationResult r =
      security::Authorize(*snapshot, settings_, principal, host, op, type, name);
  if (!r.allowed && log_denial) {
    AuthorizerLog()->info(
        "Principal = {} is Denied operation = {} from host = {} on resource = {}:{} for request = "
        "{} ({})",
        principal.ToString(), security::AclOperationName(op), host,
        security::ResourceTypeName(type), name, api, r.reason);
  }
  return r.allowed;
}

bool AclAuthorizer::AuthorizeAny(const security::KafkaPrincipal& principal, std::string_view host,
                                 security::AclOperation op, security::ResourceType type) const {
  auto snapshot = snapshot_.load();
  return security::AuthorizeAny(*snapshot, settings_, principal, host, op, type);
}

}  // namespace strata::broker
