// Metadata: client quotas (cluster/client_quota_records.h).
#include <algorithm>

#include "cluster/logger.h"
#include "cluster/metadata.h"

namespace strata::cluster {

namespace {
constexpr int kQuotaCasAttempts = 5;
}  // namespace

Status Metadata::UpdateClientQuotas(
    const QuotaEntity& entity,
    const std::function<Status(std::map<std::string, double>&)>& change) {
  ClientQuotaRecord record{entity, {}};
  std::sort(record.entity.begin(), record.entity.end());
  const std::string key = keys_.ClientQuotas(QuotaEntityKey(record.entity));
  for (int attempt = 0; attempt < kQuotaCasAttempts; ++attempt) {
    std::optional<KeyValue> current = view_->Raw(key);
    if (attempt > 0) {
      STRATA_ASSIGN_OR_RETURN(RangeResult got, kv_->Get(key));
      current = got.kvs.empty() ? std::nullopt : std::optional<KeyValue>(got.kvs[0]);
    }
    record.values.clear();
    if (current) {
      STRATA_ASSIGN_OR_RETURN(ClientQuotaRecord stored, DecodeClientQuota(current->value));
      record.values = std::move(stored.values);
    }
    STRATA_RETURN_IF_ERROR(change(record.values));
    if (record.values.empty() && !current) return Status::Ok();
    const std::string after = record.values.empty() ? std::string() : EncodeClientQuota(record);
    if (current && after == current->value) return Status::Ok();
    KvCompare guard = KvCompare::ModRevisionIs(key, current ? current->mod_revision : 0);
    KvOp op = record.values.empty() ? KvOp::Delete(key) : KvOp::Put(key, after);
    STRATA_ASSIGN_OR_RETURN(TxnResult r, Commit(std::span(&guard, 1), std::span(&op, 1)));
    if (r.succeeded) return Status::Ok();
  }
  return MakeError(Errc::kUnavailable, "client quotas of " + key + " kept changing");
}

std::vector<ClientQuotaRecord> Metadata::AllClientQuotas() const {
  std::vector<ClientQuotaRecord> out;
  for (const KeyValue& kv : view_->RawPrefix(keys_.ClientQuotasPrefix())) {
    auto record = DecodeClientQuota(kv.value);
    if (!record.ok()) {
      MetadataLog()->error("metadata record {} is unreadable: {}", kv.key, record.error().message);
      continue;
    }
    out.push_back(std::move(record).value());
  }
  return out;
}

}  // namespace strata::cluster
