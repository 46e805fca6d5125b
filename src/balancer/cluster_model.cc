#include "balancer/cluster_model.h"

#include <algorithm>

#include "base/check.h"

namespace strata::balancer {

const char* BrokerStatusName(BrokerStatus s) {
  switch (s) {
    case BrokerStatus::kActive:
      return "active";
    case BrokerStatus::kStale:
      return "stale";
    case BrokerStatus::kStandby:
      return "standby";
    case BrokerStatus::kDraining:
      return "draining";
    case BrokerStatus::kDead:
      return "dead";
  }
  return "unknown";
}

void ClusterModel::AddBroker(BrokerInfo broker) {
  STRATA_CHECK(partitions_.empty(), "brokers are added before partitions");
  STRATA_CHECK(index_.find(broker.id) == index_.end(), "broker {} added twice", broker.id);
  index_[broker.id] = static_cast<int32_t>(brokers_.size());
  brokers_.push_back(std::move(broker));
  loads_.emplace_back();
  on_broker_.emplace_back();
}

int32_t ClusterModel::IndexOf(NodeId id) const {
  auto it = index_.find(id);
  return it == index_.end() ? -1 : it->second;
}

void ClusterModel::AddPartition(PartitionInfo partition) {
  auto [it, added] =
      topic_index_.emplace(partition.topic, static_cast<int32_t>(topic_names_.size()));
  if (added) {
    topic_names_.push_back(partition.topic);
    topic_sizes_.push_back(0);
    topic_replicas_.emplace_back();
  }
  topic_sizes_[it->second]++;
  topic_of_.push_back(it->second);
  partitions_.push_back(std::move(partition));
  Account(partitions_.size() - 1, +1);
}

double ClusterModel::LeaderNetworkOut(const PartitionInfo& p) {
  const double followers = p.replicas.empty() ? 0 : static_cast<double>(p.replicas.size() - 1);
  return p.load.bytes_out + followers * p.load.bytes_in;
}

BrokerLoad* ClusterModel::LoadOf(NodeId id) {
  const int32_t b = IndexOf(id);
  return b < 0 ? nullptr : &loads_[b];
}

void ClusterModel::AddTopicReplica(int32_t topic, int32_t b, int delta) {
  auto& entries = topic_replicas_[topic];
  auto it = std::lower_bound(entries.begin(), entries.end(), std::make_pair(b, INT32_MIN));
  if (it == entries.end() || it->first != b) it = entries.insert(it, {b, 0});
  it->second += delta;
  if (it->second == 0) entries.erase(it);
}

int32_t ClusterModel::TopicReplicas(int32_t topic, int32_t b) const {
  const auto& entries = topic_replicas_[topic];
  auto it = std::lower_bound(entries.begin(), entries.end(), std::make_pair(b, INT32_MIN));
  return it != entries.end() && it->first == b ? it->second : 0;
}

// Adds (sign +1) or takes away (-1) partition p's share of every broker's load.
void ClusterModel::Account(size_t p, int sign) {
  for (NodeId r : partitions_[p].replicas) ShiftReplica(p, r, sign);
  ShiftLeadership(p, partitions_[p].leader, sign);
}

std::vector<size_t> ClusterModel::ReplicasOn(int32_t b) const { return on_broker_[b]; }

// Moves touch only the brokers they change: adding and taking away the
// same figure elsewhere would leave rounding residue in loads that callers
// use as keys.
void ClusterModel::ShiftReplica(size_t p, NodeId id, int sign) {
  const int32_t b = IndexOf(id);
  if (b < 0) return;
  const PartitionInfo& info = partitions_[p];
  BrokerLoad& l = loads_[b];
  l.network_in += sign * info.load.bytes_in;
  l.disk += sign * info.load.size;
  l.replicas += sign;
  AddTopicReplica(topic_of_[p], b, sign);
  auto& list = on_broker_[b];
  if (sign > 0) {
    list.insert(std::lower_bound(list.begin(), list.end(), p), p);
  } else {
    list.erase(std::lower_bound(list.begin(), list.end(), p));
  }
}

void ClusterModel::ShiftLeadership(size_t p, NodeId id, int sign) {
  BrokerLoad* l = LoadOf(id);
  if (l == nullptr) return;
  const PartitionInfo& info = partitions_[p];
  l->network_out += sign * LeaderNetworkOut(info);
  l->leader_bytes_in += sign * info.load.bytes_in;
  l->leaders += sign;
}

void ClusterModel::MoveReplica(size_t p, NodeId from, NodeId to) {
  PartitionInfo& info = partitions_[p];
  auto it = std::find(info.replicas.begin(), info.replicas.end(), from);
  STRATA_CHECK(it != info.replicas.end(), "{} holds no replica of {}-{}", from, info.topic,
               info.partition);
  STRATA_CHECK(std::find(info.replicas.begin(), info.replicas.end(), to) == info.replicas.end(),
               "{} holds a replica of {}-{} already", to, info.topic, info.partition);
  ShiftReplica(p, from, -1);
  ShiftReplica(p, to, +1);
  *it = to;
  std::replace(info.isr.begin(), info.isr.end(), from, to);
  if (info.leader == from) {
    ShiftLeadership(p, from, -1);
    info.leader = to;
    ShiftLeadership(p, to, +1);
  }
}

void ClusterModel::MoveLeader(size_t p, NodeId to) {
  PartitionInfo& info = partitions_[p];
  STRATA_CHECK(std::find(info.replicas.begin(), info.replicas.end(), to) != info.replicas.end(),
               "{} holds no replica of {}-{}", to, info.topic, info.partition);
  ShiftLeadership(p, info.leader, -1);
  info.leader = to;
  ShiftLeadership(p, to, +1);
}

}  // namespace strata::balancer
