#pragma once
// A user's SCRAM credentials as the metadata store keeps them
// (`<p>/scram_credentials/<user>`): per mechanism the salt, the iteration
// count and the two keys derived from the salted password (RFC 5802's
// StoredKey and ServerKey), never the password. Every broker authenticates
// SCRAM clients from its view of these keys, so a change made through any
// broker (AlterUserScramCredentials) holds on all of them at once.
#include <map>
#include <string>

#include "base/result.h"
#include "security/scram.h"

namespace strata::cluster {

struct UserScramCredentials {
  std::string user;
  std::map<security::ScramMechanism, security::ScramCredential> by_mechanism;
  bool operator==(const UserScramCredentials&) const = default;
};

// JSON: {"user": "...", "credentials": {"SCRAM-SHA-256": {"salt": b64,
// "stored_key": b64, "server_key": b64, "iterations": n}, ...}}
std::string EncodeScramCredentials(const UserScramCredentials& creds);
Result<UserScramCredentials> DecodeScramCredentials(const std::string& json);

}  // namespace strata::cluster
