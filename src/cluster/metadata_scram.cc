// Metadata: the users' SCRAM credentials (cluster/scram_credentials.h).
#include "cluster/logger.h"
#include "cluster/metadata.h"

namespace strata::cluster {

Status Metadata::UpdateScramCredentials(
    const std::string& user, const std::function<Status(UserScramCredentials&)>& change) {
  auto r = ChangeKey(keys_.ScramCredentials(user),
                     [&](const std::optional<KeyValue>& current) -> Result<KeyChange> {
                       UserScramCredentials creds{user, {}};
                       if (current) {
                         STRATA_ASSIGN_OR_RETURN(creds, DecodeScramCredentials(current->value));
                       }
                       STRATA_RETURN_IF_ERROR(change(creds));
                       if (creds.by_mechanism.empty()) return ChangeTo(current, std::nullopt);
                       return ChangeTo(current, EncodeScramCredentials(creds));
                     });
  if (!r.ok()) return r.take_error();
  return Status::Ok();
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
