#pragma once
// For tests: fills every field of the authentication APIs' messages
// (SaslHandshake, SaslAuthenticate, Describe/AlterUserScramCredentials) that
// exists in a version, for round trips and the request registry's
// hostile-input tests. `nulls` turns nullable fields into nulls.
#include <optional>
#include <string>

#include "protocol/messages/acls.h"
#include "protocol/messages/client_quotas.h"
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

inline std::optional<std::string> SecFillOpt(bool make_null, std::string s) {
  if (make_null) return std::nullopt;
  return s;
}
inline void Fill(DescribeAclsRequest& m, int16_t, bool nulls) {
  m.resource_type_filter = 2;
  m.resource_name_filter = SecFillOpt(nulls, "orders");
  m.pattern_type_filter = 4;
  m.principal_filter = SecFillOpt(nulls, "User:alice");
  m.host_filter = SecFillOpt(nulls, "*");
  m.operation = 3;
  m.permission_type = 3;
}
inline void Fill(DescribeAclsResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 2;
  m.error_message = SecFillOpt(nulls, "none");
  m.resources = {{2, "orders", 4, {{"User:alice", "*", 3, 3}, {"User:*", "10.0.0.1", 4, 2}}}};
}
inline void Fill(CreateAclsRequest& m, int16_t, bool) {
  m.creations = {{2, "orders", 3, "User:alice", "*", 4, 3}, {3, "app-", 4, "User:bob", "*", 3, 2}};
}
inline void Fill(CreateAclsResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 3;
  m.results = {{0, std::nullopt}, {42, SecFillOpt(nulls, "Invalid ACL")}};
}
inline void Fill(DeleteAclsRequest& m, int16_t v, bool nulls) {
  DescribeAclsRequest d;
  Fill(d, v, nulls);
  m.filters = {{d.resource_type_filter, d.resource_name_filter, d.pattern_type_filter,
                d.principal_filter, d.host_filter, d.operation, d.permission_type}};
}
inline void Fill(DeleteAclsResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 4;
  m.filter_results = {
      {0, std::nullopt, {{0, std::nullopt, 2, "orders", 3, "User:alice", "*", 4, 3}}},
      {35, SecFillOpt(nulls, "bad filter"), {}}};
}

inline void Fill(DescribeClientQuotasRequest& m, int16_t, bool nulls) {
  m.components = {{"user", 0, SecFillOpt(nulls, "alice")}, {"client-id", 2, std::nullopt}};
  m.strict = true;
}
inline void Fill(DescribeClientQuotasResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 6;
  m.error_message = SecFillOpt(nulls, "none");
  if (!nulls) {
    m.entries = std::vector<DescribeClientQuotasResponse::Entry>{
        {{{"user", "alice"}, {"client-id", std::nullopt}}, {{"producer_byte_rate", 1048576.5}}}};
  }
}
inline void Fill(AlterClientQuotasRequest& m, int16_t, bool nulls) {
  m.entries = {{{{"user", SecFillOpt(nulls, "alice")}},
                {{"producer_byte_rate", 2048, false}, {"consumer_byte_rate", 0, true}}}};
  m.validate_only = true;
}
inline void Fill(AlterClientQuotasResponse& m, int16_t, bool nulls) {
  m.throttle_time_ms = 7;
  m.entries = {{42, SecFillOpt(nulls, "bad key"), {{"client-id", SecFillOpt(nulls, "app")}}}};
}

}  // namespace strata::protocol
