#pragma once
// For tests: fills every field of the authentication APIs' messages
// (SaslHandshake, SaslAuthenticate, Describe/AlterUserScramCredentials) that
// exists in a version, for round trips and the request registry's
// hostile-input tests. `nulls` turns nullable fields into nulls.
#include <optional>
#include <string>

#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"
#include "protocol/messages/user_scram_credentials.h"

namespace strata::protocol {

inline void Fill(SaslHandshakeRequest& m, int16_t, bool) { m.mechanism = "SCRAM-SHA-512"; }
inline void Fill(SaslHandshakeResponse& m, int16_t, bool) {
  m.error_code = 33;
  m.mechanisms = {"PLAIN", "SCRAM-SHA-256"};
}
inline void Fill(SaslAuthenticateRequest& m, int16_t, bool) {
  m.auth_bytes = {'n', ',', ',', 'n', '=', 'u'};
}
inline void Fill(SaslAuthenticateResponse& m, int16_t v, bool nulls) {
  m.error_code = 58;
  if (!nulls) m.error_message = "Authentication failed";
  m.auth_bytes = {'v', '=', 'x'};
  if (v >= 1) m.session_lifetime_ms = 3600000;
}
inline void Fill(DescribeUserScramCredentialsRequest& m, int16_t, bool nulls) {
  if (nulls) {
    m.users.reset();
  } else {
    m.users = {{"alice"}, {"bob"}};
  }
}
inline void Fill(DescribeUserScramCredentialsResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 5;
  m.error_code = 0;
  if (!nulls) m.error_message = "none";
  m.results = {
      {"alice", 0, std::nullopt, {{1, 8192}, {2, 4096}}},
      {"ghost", 91, nulls ? std::nullopt : std::optional<std::string>("no such user"), {}}};
}
inline void Fill(AlterUserScramCredentialsRequest& m, int16_t, bool) {
  m.deletions = {{"alice", 2}};
  m.upsertions = {{"bob", 1, 8192, {1, 2, 3}, {4, 5, 6, 7}}};
}
inline void Fill(AlterUserScramCredentialsResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 1;
  m.results = {
      {"alice", 0, std::nullopt},
      {"bob", 93, nulls ? std::nullopt : std::optional<std::string>("Too few iterations")}};
}

}  // namespace strata::protocol
