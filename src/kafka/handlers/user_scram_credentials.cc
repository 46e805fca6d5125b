// DescribeUserScramCredentials (50) and AlterUserScramCredentials (51),
// KIP-554: kafka-configs --entity-type users --describe / --alter
// --add-config 'SCRAM-SHA-256=[iterations=8192,password=...]' /
// --delete-config SCRAM-SHA-256. Any broker writes the metadata store, where
// every broker's SCRAM authentication reads the credentials from its view.
// Errors as Kafka's ScramControlManager gives them, one result per user.
#include "protocol/messages/user_scram_credentials.h"

#include <map>
#include <set>

#include "cluster/metadata.h"
#include "kafka/authorization.h"
#include "kafka/error_mapping.h"
#include "kafka/handlers/handlers.h"
#include "kafka/logger.h"

namespace strata::kafka {

namespace {

using protocol::AlterUserScramCredentialsRequest;
using protocol::ErrorCode;

struct UserError {
  ErrorCode code = ErrorCode::kNone;
  std::string message;
};

// Checks one upsertion as Kafka does before anything is written.
UserError CheckUpsertion(const AlterUserScramCredentialsRequest::Upsertion& u) {
  if (u.name.empty()) return {ErrorCode::kUnacceptableCredential, "Username must not be empty"};
  if (!security::ScramMechanismFromId(u.mechanism)) {
    return {ErrorCode::kUnsupportedSaslMechanism, "Unknown SCRAM mechanism"};
  }
  if (u.iterations < security::kScramMinIterations) {
    return {ErrorCode::kUnacceptableCredential, "Too few iterations"};
  }
  if (u.iterations > security::kScramMaxIterations) {
    return {ErrorCode::kUnacceptableCredential, "Too many iterations"};
  }
  if (u.salt.empty() || u.salted_password.empty()) {
    return {ErrorCode::kUnacceptableCredential, "Salt and salted password must not be empty"};
  }
  return {};
}

// The changes a request makes to one user.
struct UserChanges {
  std::vector<const AlterUserScramCredentialsRequest::Deletion*> deletions;
  std::vector<const AlterUserScramCredentialsRequest::Upsertion*> upsertions;
  UserError error;
};

std::map<std::string, UserChanges> GroupByUser(const AlterUserScramCredentialsRequest& req) {
  std::map<std::string, UserChanges> users;
  std::set<std::pair<std::string, int8_t>> seen;
  auto note = [&](const std::string& user, int8_t mechanism) {
    if (!seen.insert({user, mechanism}).second && users[user].error.code == ErrorCode::kNone) {
      users[user].error = {ErrorCode::kDuplicateResource,
                           "A user credential cannot be altered twice in the same request"};
    }
  };
  for (const auto& d : req.deletions) {
    note(d.name, d.mechanism);
    users[d.name].deletions.push_back(&d);
    if (!security::ScramMechanismFromId(d.mechanism) &&
        users[d.name].error.code == ErrorCode::kNone)
      users[d.name].error = {ErrorCode::kUnsupportedSaslMechanism, "Unknown SCRAM mechanism"};
  }
  for (const auto& u : req.upsertions) {
    note(u.name, u.mechanism);
    users[u.name].upsertions.push_back(&u);
    UserError e = CheckUpsertion(u);
    if (e.code != ErrorCode::kNone && users[u.name].error.code == ErrorCode::kNone)
      users[u.name].error = std::move(e);
  }
  return users;
}

UserError ApplyChanges(cluster::Metadata& metadata, const std::string& user,
                       const UserChanges& changes) {
  Status st = metadata.UpdateScramCredentials(user, [&](cluster::UserScramCredentials& creds) {
    for (const auto* d : changes.deletions) {
      if (creds.by_mechanism.erase(*security::ScramMechanismFromId(d->mechanism)) == 0) {
        return Status(
            MakeError(Errc::kNotFound, "Attempt to delete a user credential that does not exist"));
      }
    }
    for (const auto* u : changes.upsertions) {
      const auto mechanism = *security::ScramMechanismFromId(u->mechanism);
      creds.by_mechanism[mechanism] = security::ScramCredentialFromSaltedPassword(
          mechanism, u->salted_password, u->salt, u->iterations);
    }
    return Status::Ok();
  });
  if (st.ok()) return {};
  if (st.error().code == Errc::kNotFound) {
    return {ErrorCode::kResourceNotFound, st.error().message};
  }
  return {GenericErrorCode(st.error().code), st.error().message};
}

}  // namespace

HandlerResult HandleAlterUserScramCredentials(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(AlterUserScramCredentialsRequest req,
                          DecodeRequest<AlterUserScramCredentialsRequest>(request));
  protocol::AlterUserScramCredentialsResponse resp;
  const bool allowed = AuthorizedOnCluster(ctx, request, security::AclOperation::kAlter);
  for (auto& [user, changes] : GroupByUser(req)) {
    UserError e = changes.error;
    if (!allowed) e = {ErrorCode::kClusterAuthorizationFailed, "Cluster authorization failed."};
    if (e.code == ErrorCode::kNone) {
      e = ctx.metadata != nullptr
              ? ApplyChanges(*ctx.metadata, user, changes)
              : UserError{ErrorCode::kCoordinatorNotAvailable, "no cluster metadata"};
    }
    if (e.code == ErrorCode::kNone) {
      Log()->info("SCRAM credentials of user {} altered ({} removed, {} set)", user,
                  changes.deletions.size(), changes.upsertions.size());
    }
    resp.results.push_back(
        {user, static_cast<int16_t>(e.code),
         e.code == ErrorCode::kNone ? std::nullopt : std::optional<std::string>(e.message)});
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult HandleDescribeUserScramCredentials(BrokerContext& ctx, net::Request& request) {
  using protocol::DescribeUserScramCredentialsRequest;
  using protocol::DescribeUserScramCredentialsResponse;
  STRATA_ASSIGN_OR_RETURN(DescribeUserScramCredentialsRequest req,
                          DecodeRequest<DescribeUserScramCredentialsRequest>(request));
  DescribeUserScramCredentialsResponse resp;
  if (!AuthorizedOnCluster(ctx, request, security::AclOperation::kDescribe)) {
    resp.error_code = static_cast<int16_t>(ErrorCode::kClusterAuthorizationFailed);
    resp.error_message = "Cluster authorization failed.";
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  if (ctx.metadata == nullptr) {
    resp.error_code = static_cast<int16_t>(ErrorCode::kCoordinatorNotAvailable);
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  auto describe = [](const cluster::UserScramCredentials& creds) {
    DescribeUserScramCredentialsResponse::Result r;
    r.user = creds.user;
    for (const auto& [mechanism, c] : creds.by_mechanism)
      r.credential_infos.push_back({static_cast<int8_t>(mechanism), c.iterations});
    return r;
  };
  if (!req.users || req.users->empty()) {
    for (const auto& creds : ctx.metadata->AllScramCredentials())
      resp.results.push_back(describe(creds));
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  std::map<std::string, int> asked;
  for (const auto& u : *req.users) ++asked[u.name];
  for (const auto& [user, times] : asked) {
    DescribeUserScramCredentialsResponse::Result r;
    auto creds = ctx.metadata->ScramCredentials(user);
    if (times > 1) {
      r.user = user;
      r.error_code = static_cast<int16_t>(ErrorCode::kDuplicateResource);
      r.error_message =
          "Cannot describe SCRAM credentials for the same user twice in a single "
          "request: " +
          user;
    } else if (!creds) {
      r.user = user;
      r.error_code = static_cast<int16_t>(ErrorCode::kResourceNotFound);
      r.error_message = "Attempt to describe a user credential that does not exist: " + user;
    } else {
      r = describe(*creds);
    }
    resp.results.push_back(std::move(r));
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
