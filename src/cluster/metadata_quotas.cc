// Metadata: client quotas (cluster/client_quota_records.h).
#include <algorithm>

#include "cluster/logger.h"
#include "cluster/metadata.h"

namespace strata::cluster {

Status Metadata::UpdateClientQuotas(
    const QuotaEntity& entity,
    const std::function<Status(std::map<std::string, double>&)>& change) {
  ClientQuotaRecord record{entity, {}};
  std::sort(record.entity.begin(), record.entity.end());
  auto r = ChangeKey(keys_.ClientQuotas(QuotaEntityKey(record.entity)),
                     [&](const std::optional<KeyValue>& current) -> Result<KeyChange> {
                       record.values.clear();
                       if (current) {
                         STRATA_ASSIGN_OR_RETURN(ClientQuotaRecord stored,
                                                 DecodeClientQuota(current->value));
                         record.values = std::move(stored.values);
                       }
                       STRATA_RETURN_IF_ERROR(change(record.values));
                       if (record.values.empty()) return ChangeTo(current, std::nullopt);
                       return ChangeTo(current, EncodeClientQuota(record));
                     });
  if (!r.ok()) return r.take_error();
  return Status::Ok();
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
