#pragma once
// AdminAccess: who may use the admin HTTP API and console, and how much.
// Bearer tokens come from strata.admin.token.file (one "<token> <role>" per
// line, role `admin` or `read`); with mutual TLS on the admin listener a
// client certificate whose mapped principal is in strata.admin.admin.principals
// is an admin and any other trusted one may read. Reading (GET) needs the
// read role, actions (POST: balancer pause, apply, ...) the admin role.
// Without tokens or client certificates the API is open, as it was.
// Immutable once loaded; safe from any thread.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "base/result.h"
#include "security/principal.h"

namespace strata::admin {

enum class AdminRole { kNone, kRead, kAdmin };

class AdminAccess {
 public:
  AdminAccess() = default;  // open
  // `token_file` empty: no tokens. `client_certificates`: the listener asks
  // for (and verifies) client certificates.
  static Result<AdminAccess> Load(const std::string& token_file,
                                  const std::set<std::string>& admin_principals,
                                  bool client_certificates);

  bool open() const { return tokens_.empty() && !client_certificates_; }
  // The role of a request with `bearer` (the Authorization header's token)
  // over a connection with `certificate` (its mapped principal, when the
  // client presented a trusted one).
  AdminRole RoleOf(std::optional<std::string_view> bearer,
                   const std::optional<security::KafkaPrincipal>& certificate) const;

 private:
  std::map<std::string, AdminRole> tokens_;
  std::set<std::string> admin_principals_;
  bool client_certificates_ = false;
};

}  // namespace strata::admin
