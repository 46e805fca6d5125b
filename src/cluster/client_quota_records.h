#pragma once
// The client quotas of one entity as the metadata store keeps them
// (`<p>/client_quotas/<entity>`): the entity as Kafka names it (a list of
// (type, name) with a null name for the type's default: user, client-id)
// and its quota values (producer_byte_rate, consumer_byte_rate,
// request_percentage). Every broker's quota managers read them from the
// view, so kafka-configs --alter through any broker applies everywhere.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace strata::cluster {

using QuotaEntity = std::vector<std::pair<std::string, std::optional<std::string>>>;

struct ClientQuotaRecord {
  QuotaEntity entity;  // sorted by type
  std::map<std::string, double> values;
};

// The entity's key component: "client-id=app/user=%3Cdefault%3E"-like,
// types sorted, names escaped so the key is one path component.
std::string QuotaEntityKey(QuotaEntity entity);

std::string EncodeClientQuota(const ClientQuotaRecord& record);
Result<ClientQuotaRecord> DecodeClientQuota(const std::string& json);

}  // namespace strata::cluster
