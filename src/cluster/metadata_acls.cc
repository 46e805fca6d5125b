// Metadata: the ACLs (cluster/acl_records.h).
#include "cluster/logger.h"
#include "cluster/metadata.h"

namespace strata::cluster {

namespace {
constexpr int kAclCasAttempts = 5;
}  // namespace

Status Metadata::UpdateAcls(
    const security::ResourcePattern& pattern,
    const std::function<Status(std::vector<security::AccessControlEntry>&)>& change) {
  const std::string key =
      keys_.Acls(static_cast<int>(pattern.type), static_cast<int>(pattern.pattern), pattern.name);
  for (int attempt = 0; attempt < kAclCasAttempts; ++attempt) {
    std::optional<KeyValue> current = view_->Raw(key);
    if (attempt > 0) {
      STRATA_ASSIGN_OR_RETURN(RangeResult got, kv_->Get(key));
      current = got.kvs.empty() ? std::nullopt : std::optional<KeyValue>(got.kvs[0]);
    }
    ResourceAcls acls{pattern, {}};
    if (current) {
      STRATA_ASSIGN_OR_RETURN(acls, DecodeResourceAcls(current->value));
    }
    const std::string before = current ? current->value : std::string();
    STRATA_RETURN_IF_ERROR(change(acls.entries));
    if (acls.entries.empty() && !current) return Status::Ok();
    const std::string after = acls.entries.empty() ? std::string() : EncodeResourceAcls(acls);
    if (current && after == before) return Status::Ok();  // nothing changed
    KvCompare guard = KvCompare::ModRevisionIs(key, current ? current->mod_revision : 0);
    KvOp op = acls.entries.empty() ? KvOp::Delete(key) : KvOp::Put(key, after);
    STRATA_ASSIGN_OR_RETURN(TxnResult r, Commit(std::span(&guard, 1), std::span(&op, 1)));
    if (r.succeeded) return Status::Ok();
  }
  return MakeError(Errc::kUnavailable, "the ACLs of " + pattern.name + " kept changing");
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
