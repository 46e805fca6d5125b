#include "broker/client_quotas.h"

namespace strata::broker {

namespace {

ClientQuotaEntity ToEntity(const cluster::QuotaEntity& entity) {
  ClientQuotaEntity out;
  for (const auto& [type, name] : entity) {
    if (type == "user") {
      out.has_user = true;
      out.user = name;
    } else if (type == "client-id") {
      out.has_client_id = true;
      out.client_id = name;
    }
  }
  return out;
}

std::optional<double> ValueOf(const std::map<std::string, double>& values, const char* key) {
  auto it = values.find(key);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

}  // namespace

QuotaConfigs ToQuotaConfigs(const std::vector<cluster::ClientQuotaRecord>& records) {
  QuotaConfigs configs;
  for (const auto& r : records) {
    QuotaValues& v = configs[ToEntity(r.entity)];
    v.producer_byte_rate = ValueOf(r.values, "producer_byte_rate");
    v.consumer_byte_rate = ValueOf(r.values, "consumer_byte_rate");
    v.request_percentage = ValueOf(r.values, "request_percentage");
    v.controller_mutation_rate = ValueOf(r.values, "controller_mutation_rate");
  }
  return configs;
}

ClientQuotas::ClientQuotas(const config::BrokerConfig& config, cluster::Metadata& metadata)
    : metadata_(metadata),
      produce_(QuotaType::kProduce, static_cast<int>(config.GetLong("quota.window.num")),
               config.GetLong("quota.window.size.seconds") * 1000),
      fetch_(QuotaType::kFetch, static_cast<int>(config.GetLong("quota.window.num")),
             config.GetLong("quota.window.size.seconds") * 1000),
      request_(QuotaType::kRequest, static_cast<int>(config.GetLong("quota.window.num")),
               config.GetLong("quota.window.size.seconds") * 1000) {
  const std::string prefix = metadata.keys().ClientQuotasPrefix();
  subscription_ = metadata.view().Subscribe(
      [this, prefix](const std::vector<std::string>& keys, bool reloaded) {
        bool touched = reloaded;
        for (const auto& k : keys) touched = touched || k.starts_with(prefix);
        if (touched) Reload();
      });
  Reload();
}

ClientQuotas::~ClientQuotas() {
  if (subscription_ >= 0) metadata_.view().Unsubscribe(subscription_);
}

void ClientQuotas::Reload() {
  const QuotaConfigs configs = ToQuotaConfigs(metadata_.AllClientQuotas());
  produce_.UpdateConfigs(configs);
  fetch_.UpdateConfigs(configs);
  request_.UpdateConfigs(configs);
}

void ClientQuotas::ExpireIdleSensors(int64_t now_ms) {
  produce_.ExpireIdleSensors(now_ms);
  fetch_.ExpireIdleSensors(now_ms);
  request_.ExpireIdleSensors(now_ms);
}

}  // namespace strata::broker
