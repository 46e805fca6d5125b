#include "admin/admin_access.h"

#include <fmt/format.h>
#include <openssl/crypto.h>

#include <fstream>
#include <sstream>

namespace strata::admin {

Result<AdminAccess> AdminAccess::Load(const std::string& token_file,
                                      const std::set<std::string>& admin_principals,
                                      bool client_certificates) {
  AdminAccess access;
  access.admin_principals_ = admin_principals;
  access.client_certificates_ = client_certificates;
  if (token_file.empty()) return access;
  std::ifstream in(token_file);
  if (!in) {
    return MakeError(Errc::kInvalidArgument, "strata.admin.token.file: cannot read " + token_file);
  }
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::istringstream fields(line);
    std::string token, role, extra;
    if (!(fields >> token) || token.starts_with("#")) continue;
    fields >> role >> extra;
    if ((role != "admin" && role != "read") || !extra.empty() || token.size() < 16) {
      return MakeError(Errc::kInvalidArgument,
                       fmt::format("strata.admin.token.file {} line {}: expected '<token of 16+ "
                                   "characters> admin|read'",
                                   token_file, number));
    }
    access.tokens_[token] = role == "admin" ? AdminRole::kAdmin : AdminRole::kRead;
  }
  if (access.tokens_.empty()) {
    return MakeError(Errc::kInvalidArgument,
                     "strata.admin.token.file " + token_file + " holds no token");
  }
  return access;
}

AdminRole AdminAccess::RoleOf(std::optional<std::string_view> bearer,
                              const std::optional<security::KafkaPrincipal>& certificate) const {
  if (open()) return AdminRole::kAdmin;
  AdminRole role = AdminRole::kNone;
  if (bearer) {
    // Compared in constant time, whichever token it is.
    for (const auto& [token, token_role] : tokens_) {
      if (token.size() == bearer->size() &&
          CRYPTO_memcmp(token.data(), bearer->data(), token.size()) == 0) {
        role = token_role;
      }
    }
  }
  if (certificate && client_certificates_ && role != AdminRole::kAdmin) {
    role =
        admin_principals_.contains(certificate->ToString()) ? AdminRole::kAdmin : AdminRole::kRead;
  }
  return role;
}

}  // namespace strata::admin
