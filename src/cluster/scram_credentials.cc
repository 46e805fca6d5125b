#include "cluster/scram_credentials.h"

#include <nlohmann/json.hpp>

namespace strata::cluster {

std::string EncodeScramCredentials(const UserScramCredentials& creds) {
  nlohmann::json by_mechanism = nlohmann::json::object();
  for (const auto& [mechanism, c] : creds.by_mechanism) {
    by_mechanism[std::string(security::ScramMechanismName(mechanism))] = {
        {"salt", security::Base64Encode(c.salt)},
        {"stored_key", security::Base64Encode(c.stored_key)},
        {"server_key", security::Base64Encode(c.server_key)},
        {"iterations", c.iterations}};
  }
  return nlohmann::json{{"user", creds.user}, {"credentials", by_mechanism}}.dump();
}

namespace {

Result<Bytes> DecodeKey(const nlohmann::json& entry, const char* field) {
  auto bytes = security::Base64Decode(entry.at(field).get<std::string>());
  if (!bytes) return MakeError(Errc::kCorrupt, std::string(field) + " is not base64");
  return std::move(*bytes);
}

}  // namespace

Result<UserScramCredentials> DecodeScramCredentials(const std::string& json) {
  try {
    auto j = nlohmann::json::parse(json);
    UserScramCredentials out;
    out.user = j.at("user").get<std::string>();
    for (const auto& [name, entry] : j.at("credentials").items()) {
      auto mechanism = security::ScramMechanismFromName(name);
      if (!mechanism) return MakeError(Errc::kCorrupt, "unknown SCRAM mechanism " + name);
      security::ScramCredential c;
      STRATA_ASSIGN_OR_RETURN(c.salt, DecodeKey(entry, "salt"));
      STRATA_ASSIGN_OR_RETURN(c.stored_key, DecodeKey(entry, "stored_key"));
      STRATA_ASSIGN_OR_RETURN(c.server_key, DecodeKey(entry, "server_key"));
      c.iterations = entry.at("iterations").get<int32_t>();
      out.by_mechanism[*mechanism] = std::move(c);
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    return MakeError(Errc::kCorrupt, std::string("SCRAM credentials record: ") + e.what());
  }
}

}  // namespace strata::cluster
