// Metadata: the ACLs (cluster/acl_records.h).
#include "cluster/logger.h"
#include "cluster/metadata.h"

namespace strata::cluster {

Status Metadata::UpdateAcls(
    const security::ResourcePattern& pattern,
    const std::function<Status(std::vector<security::AccessControlEntry>&)>& change) {
  const std::string key =
      keys_.Acls(static_cast<int>(pattern.type), static_cast<int>(pattern.pattern), pattern.name);
  auto r = ChangeKey(key, [&](const std::optional<KeyValue>& current) -> Result<KeyChange> {
    ResourceAcls acls{pattern, {}};
    if (current) {
      STRATA_ASSIGN_OR_RETURN(acls, DecodeResourceAcls(current->value));
    }
    STRATA_RETURN_IF_ERROR(change(acls.entries));
    if (acls.entries.empty()) return ChangeTo(current, std::nullopt);
    return ChangeTo(current, EncodeResourceAcls(acls));
  });
  if (!r.ok()) return r.take_error();
  return Status::Ok();
}

std::vector<security::AclBinding> Metadata::AllAcls() const {
  std::vector<security::AclBinding> out;
  for (const KeyValue& kv : view_->RawPrefix(keys_.AclsPrefix())) {
    auto acls = DecodeResourceAcls(kv.value);
    if (!acls.ok()) {
      MetadataLog()->error("metadata record {} is unreadable: {}", kv.key, acls.error().message);
      continue;
    }
    for (auto& e : acls->entries) out.push_back({acls->pattern, std::move(e)});
  }
  return out;
}

}  // namespace strata::cluster
