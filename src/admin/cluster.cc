#include "admin/cluster.h"

#include <map>
#include <set>

#include "balancer/service/balancer_service.h"
#include "broker/topic_manager.h"
#include "cluster/metadata.h"
#include "cluster/scaling_roles.h"
#include "kafka/cluster_state.h"

namespace strata::admin {

namespace {

using nlohmann::json;

json BrokerJson(const cluster::BrokerRegistration& r, const cluster::ScalingRoles& roles,
                bool live) {
  json listeners = json::array();
  for (const auto& l : r.listeners) {
    listeners.push_back({{"name", l.name}, {"host", l.host}, {"port", l.port}});
  }
  json capacity = json::object();
  for (const auto& [key, value] : r.capacity) capacity[key] = value;
  // The first listener's address at the top, as a client would dial it.
  const cluster::BrokerListener* at = cluster::InterBrokerEndpoint(r);
  const std::string host = at == nullptr ? "" : at->host;
  const int32_t port = at == nullptr ? 0 : at->port;
  return {{"node_id", r.node_id.value()},
          {"host", host},
          {"port", port},
          {"rack", r.rack.empty() ? json(nullptr) : json(r.rack)},
          {"listeners", listeners},
          {"state", live ? cluster::BrokerStateName(r.state) : "offline"},
          {"role", cluster::BrokerStateName(roles.Effective(r))},
          {"capacity", capacity},
          {"replicas", 0},
          {"leaders", 0}};
}

}  // namespace

json ClusterJson(const AdminContext& admin) {
  const kafka::BrokerContext& ctx = admin.broker;
  json body{{"cluster_id", ctx.store.cluster_id()},
            {"node_id", ctx.config.node_id()},
            {"controller_id", kafka::ControllerId(ctx)}};
  if (ctx.metadata == nullptr) {
    const cluster::BrokerListener own =
        ctx.advertised.empty() ? cluster::BrokerListener{} : ctx.advertised.front();
    body["brokers"] = json::array({{{"node_id", ctx.config.node_id()},
                                    {"host", own.host},
                                    {"port", own.port},
                                    {"state", "active"},
                                    {"role", "active"}}});
    return body;
  }
  const cluster::MetadataView& view = ctx.metadata->view();
  const auto roles =
      cluster::ScalingRoles::FromConfigs(ctx.metadata->BrokerConfigs(broker::kDefaultBrokerEntity));
  std::map<int32_t, json> brokers;
  for (const auto& b : view.Brokers()) {
    json j = BrokerJson(b.registration, roles, true);
    j["broker_epoch"] = b.epoch.value();
    brokers[b.registration.node_id.value()] = std::move(j);
  }
  for (const auto& r : ctx.metadata->KnownBrokers()) {
    if (brokers.count(r.node_id.value()) == 0) {
      brokers[r.node_id.value()] = BrokerJson(r, roles, false);
    }
  }
  // The controller's latest load sample of each broker.
  if (balancer::BalancerService* b = admin.balancer.load(); b != nullptr) {
    for (const auto& load : b->BrokerLoadJson()) {
      auto it = brokers.find(load.at("node_id").get<int32_t>());
      if (it == brokers.end()) continue;
      json l = load;
      l.erase("node_id");
      it->second["load"] = std::move(l);
    }
  }
  int64_t partitions = 0, offline = 0;
  for (const auto& t : view.Topics()) {
    for (const auto& [index, p] : view.Partitions(cluster::UuidToBase64(t.record.id))) {
      (void)index;
      partitions++;
      if (p.record.leader.value() < 0) offline++;
      for (cluster::NodeId r : p.record.replicas) {
        auto it = brokers.find(r.value());
        if (it != brokers.end()) it->second["replicas"] = it->second["replicas"].get<int>() + 1;
      }
      auto it = brokers.find(p.record.leader.value());
      if (it != brokers.end()) it->second["leaders"] = it->second["leaders"].get<int>() + 1;
    }
  }
  body["brokers"] = json::array();
  for (auto& [id, j] : brokers) body["brokers"].push_back(std::move(j));
  body["partitions"] = partitions;
  body["offline_partitions"] = offline;
  return body;
}

}  // namespace strata::admin
