#include "kafka/cluster_state.h"

#include <algorithm>
#include <random>

#include "broker/topic_manager.h"
#include "cluster/metadata.h"
#include "cluster/scaling_roles.h"

namespace strata::kafka {

namespace {

// Appends `b` as reached at `listener` (nothing if it has none).
void AppendAtListener(const cluster::BrokerRegistration& b, std::string_view listener,
                      std::vector<LiveBroker>& out) {
  const cluster::BrokerListener* l = cluster::FindListener(b, listener);
  if (l == nullptr) return;
  LiveBroker entry{b.node_id.value(), l->host, l->port, std::nullopt};
  if (!b.rack.empty()) entry.rack = b.rack;
  out.push_back(std::move(entry));
}

// The registrations that are (or are not) fenced, at `listener`.
std::vector<LiveBroker> Registered(const BrokerContext& ctx, bool fenced,
                                   std::string_view listener) {
  std::vector<LiveBroker> out;
  if (ctx.metadata == nullptr) return out;
  for (const auto& b : ctx.metadata->view().Brokers()) {
    if ((b.registration.state == cluster::BrokerState::kFenced) != fenced) continue;
    AppendAtListener(b.registration, listener, out);
  }
  return out;
}

}  // namespace

std::string_view InterBrokerListener(const BrokerContext& ctx) {
  return ctx.config.inter_broker_listener();
}

std::vector<LiveBroker> LiveBrokers(const BrokerContext& ctx, std::string_view listener) {
  std::vector<LiveBroker> out = Registered(ctx, /*fenced=*/false, listener);
  bool self = std::any_of(out.begin(), out.end(),
                          [&](const LiveBroker& b) { return b.node_id == ctx.config.node_id(); });
  const cluster::BrokerListener* own = nullptr;
  for (const auto& l : ctx.advertised) {
    if (l.name == listener) own = &l;
  }
  if (!self && own != nullptr) {
    out.push_back({ctx.config.node_id(), own->host, own->port, std::nullopt});
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.node_id < b.node_id; });
  }
  return out;
}

std::vector<LiveBroker> FencedBrokers(const BrokerContext& ctx, std::string_view listener) {
  std::vector<LiveBroker> out = Registered(ctx, /*fenced=*/true, listener);
  if (ctx.metadata == nullptr) return out;
  // As in KRaft, a broker stays known once it registered: without a live
  // registration (lease gone: stopped, crashed, cut off) it is fenced.
  for (const auto& b : ctx.metadata->KnownBrokers()) {
    if (!ctx.metadata->view().Broker(b.node_id)) AppendAtListener(b, listener, out);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.node_id < b.node_id; });
  return out;
}

std::vector<cluster::PlacementBroker> PlacementBrokers(const BrokerContext& ctx) {
  std::vector<cluster::PlacementBroker> out;
  const cluster::NodeId self(ctx.config.node_id());
  bool has_self = false;
  if (ctx.metadata != nullptr) {
    // New replicas go to brokers active now, as scaling made them.
    const auto roles = cluster::ScalingRoles::FromConfigs(
        ctx.metadata->BrokerConfigs(broker::kDefaultBrokerEntity));
    for (const auto& b : ctx.metadata->view().Brokers()) {
      if (b.registration.node_id == self) has_self = true;
      if (roles.Effective(b.registration) != cluster::BrokerState::kActive) continue;
      out.push_back({b.registration.node_id, b.registration.rack});
    }
  }
  if (!has_self) out.push_back({self, ctx.config.Get("broker.rack")});
  return out;
}

Result<cluster::ReplicaAssignment> PlaceNewReplicas(const BrokerContext& ctx, int32_t partitions,
                                                    int16_t replication_factor,
                                                    int32_t first_partition) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  cluster::PlacementRequest request;
  request.partitions = partitions;
  request.replication_factor = replication_factor;
  request.start_index = static_cast<uint32_t>(rng());
  request.replica_shift = static_cast<uint32_t>(rng());
  request.first_partition = first_partition;
  return cluster::PlaceReplicas(PlacementBrokers(ctx), request);
}

int32_t ControllerId(const BrokerContext& ctx) {
  if (ctx.metadata != nullptr) {
    if (auto c = ctx.metadata->view().Controller()) return c->node.value();
  }
  return ctx.config.node_id();
}

namespace {

PartitionState StateOf(const BrokerContext& ctx, const cluster::PartitionEntry* entry,
                       const std::vector<LiveBroker>& live) {
  auto is_live = [&](cluster::NodeId id) {
    return std::any_of(live.begin(), live.end(),
                       [&](const LiveBroker& b) { return b.node_id == id.value(); });
  };
  PartitionState s;
  if (entry == nullptr) {
    const cluster::NodeId self(ctx.config.node_id());
    s.record.leader = self;
    s.record.leader_epoch = cluster::LeaderEpoch(0);
    s.record.replicas = s.record.isr = {self};
  } else {
    s.record = entry->record;
  }
  for (cluster::NodeId id : s.record.replicas) {
    if (!is_live(id)) s.offline_replicas.push_back(id);
  }
  s.leader_available = s.record.leader != cluster::kNoNode && is_live(s.record.leader);
  return s;
}

}  // namespace

std::vector<PartitionState> PartitionStates(const BrokerContext& ctx,
                                            const cluster::TopicRecord& topic,
                                            const std::vector<LiveBroker>& live) {
  std::map<int32_t, cluster::PartitionEntry> records;
  if (ctx.metadata != nullptr)
    records = ctx.metadata->view().Partitions(cluster::UuidToBase64(topic.id));
  std::vector<PartitionState> out;
  out.reserve(static_cast<size_t>(topic.partitions));
  for (int32_t p = 0; p < topic.partitions; ++p) {
    auto it = records.find(p);
    out.push_back(StateOf(ctx, it == records.end() ? nullptr : &it->second, live));
  }
  return out;
}

PartitionState PartitionStateOf(const BrokerContext& ctx, const cluster::TopicRecord& topic,
                                int32_t partition, const std::vector<LiveBroker>& live) {
  std::optional<cluster::PartitionEntry> entry;
  if (ctx.metadata != nullptr)
    entry = ctx.metadata->view().Partition(cluster::UuidToBase64(topic.id), partition);
  return StateOf(ctx, entry ? &*entry : nullptr, live);
}

std::vector<int32_t> WireIds(const std::vector<cluster::NodeId>& ids) {
  std::vector<int32_t> out;
  out.reserve(ids.size());
  for (cluster::NodeId id : ids) out.push_back(id.value());
  return out;
}

}  // namespace strata::kafka
