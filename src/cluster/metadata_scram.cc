// Metadata: the users' SCRAM credentials (cluster/scram_credentials.h).
#include "cluster/logger.h"
#include "cluster/metadata.h"

namespace strata::cluster {

namespace {
constexpr int kScramCasAttempts = 5;
}  // namespace

Status Metadata::UpdateScramCredentials(
    const std::string& user, const std::function<Status(UserScramCredentials&)>& change) {
  const std::string key = keys_.ScramCredentials(user);
  for (int attempt = 0; attempt < kScramCasAttempts; ++attempt) {
    std::optional<KeyValue> current = view_->Raw(key);
    if (attempt > 0) {
      STRATA_ASSIGN_OR_RETURN(RangeResult got, kv_->Get(key));
      current = got.kvs.empty() ? std::nullopt : std::optional<KeyValue>(got.kvs[0]);
    }
    UserScramCredentials creds{user, {}};
    if (current) {
      STRATA_ASSIGN_OR_RETURN(creds, DecodeScramCredentials(current->value));
    }
    STRATA_RETURN_IF_ERROR(change(creds));
    KvCompare guard = KvCompare::ModRevisionIs(key, current ? current->mod_revision : 0);
    KvOp op = creds.by_mechanism.empty() ? KvOp::Delete(key)
                                         : KvOp::Put(key, EncodeScramCredentials(creds));
    if (creds.by_mechanism.empty() && !current) return Status::Ok();  // nothing to delete
    STRATA_ASSIGN_OR_RETURN(TxnResult r, Commit(std::span(&guard, 1), std::span(&op, 1)));
    if (r.succeeded) return Status::Ok();
  }
  return MakeError(Errc::kUnavailable, "SCRAM credentials of " + user + " kept changing");
}

std::optional<UserScramCredentials> Metadata::ScramCredentials(const std::string& user) const {
  auto kv = view_->Raw(keys_.ScramCredentials(user));
  if (!kv) return std::nullopt;
  auto creds = DecodeScramCredentials(kv->value);
  if (!creds.ok()) {
    MetadataLog()->error("metadata record {} is unreadable: {}", kv->key, creds.error().message);
    return std::nullopt;
  }
  return std::move(creds).value();
}

std::vector<UserScramCredentials> Metadata::AllScramCredentials() const {
  std::vector<UserScramCredentials> out;
  for (const KeyValue& kv : view_->RawPrefix(keys_.ScramCredentialsPrefix())) {
    auto creds = DecodeScramCredentials(kv.value);
    if (creds.ok()) out.push_back(std::move(creds).value());
  }
  return out;
}

}  // namespace strata::cluster
