#pragma once
// ClientQuotas: this broker's client quota managers (produce bytes, fetch
// bytes, request time; broker/quota/) over the quotas kept in the metadata
// store (kafka-configs --entity-type users|clients). They follow the view:
// a quota altered through any broker applies here once the view has it.
// Thread-safe (the managers lock inside; the view's thread reloads them).
#include <memory>

#include "broker/quota/client_quota_manager.h"
#include "cluster/metadata.h"
#include "config/broker_config.h"

namespace strata::broker {

class ClientQuotas {
 public:
  // quota.window.num samples of quota.window.size.seconds each.
  ClientQuotas(const config::BrokerConfig& config, cluster::Metadata& metadata);
  ~ClientQuotas();
  ClientQuotas(const ClientQuotas&) = delete;
  ClientQuotas& operator=(const ClientQuotas&) = delete;

  ClientQuotaManager& produce() { return produce_; }
  ClientQuotaManager& fetch() { return fetch_; }
  ClientQuotaManager& request() { return request_; }
  // Drops the sensors of clients idle for an hour (Kafka's expiry).
  void ExpireIdleSensors(int64_t now_ms);

 private:
  void Reload();

  cluster::Metadata& metadata_;
  ClientQuotaManager produce_;
  ClientQuotaManager fetch_;
  ClientQuotaManager request_;
  int subscription_ = -1;
};

// The quota configs of the metadata store's records.
QuotaConfigs ToQuotaConfigs(const std::vector<cluster::ClientQuotaRecord>& records);

}  // namespace strata::broker
