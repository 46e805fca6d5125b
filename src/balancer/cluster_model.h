#pragma once
// ClusterModel: the balancer's picture of the cluster, on which a plan is
// made: brokers (rack, state, capacity) and partitions (replicas, leader,
// ISR, load), with each broker's load kept up to date as moves are applied
// to it. The active controller builds one from its metadata view and the
// load samples of `__strata_metrics` (model_builder.h); the simulator builds
// synthetic ones. A plan is made on a copy, so the live model never sees a
// move that was only considered.
//
// Load model. A partition's bytes in reach every replica (the leader from
// producers, followers by replication); its consumer bytes out and the
// replication traffic to its followers leave from its leader:
//   network_in(b)  = sum of bytes_in over the replicas on b
//   network_out(b) = sum over the partitions b leads of
//                    bytes_out + (replicas - 1) * bytes_in
// so leadership moves shift network out, leader counts and leader bytes
// in, and only replica moves shift network in.
//
// Thread-safety: none; one planner works on one model at a time.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cluster/types.h"

namespace strata::balancer {

using cluster::NodeId;

// Where the balancer may place replicas on a broker.
enum class BrokerStatus {
  kActive,    // live, registered active, with a fresh load sample
  kStale,     // live, but no fresh sample: keeps what it has, gets nothing
  kStandby,   // registered as standby: holds nothing until scaled in
  kDraining,  // being emptied (scale-in): everything moves off
  kDead,      // gone longer than the failure timeout: everything moves off
};
const char* BrokerStatusName(BrokerStatus s);

struct BrokerCapacity {    // 0: not declared
  double network_in = 0;   // bytes/s
  double network_out = 0;  // bytes/s
  int64_t disk = 0;        // bytes
  double cpu = 0;          // cores
};

struct BrokerInfo {
  NodeId id{-1};
  std::string rack;
  BrokerStatus status = BrokerStatus::kActive;
  BrokerCapacity capacity;
  double cpu_used = 0;  // cores, from its last sample
};

// A partition's load as measured (on its leader), in bytes/s and bytes.
struct PartitionLoad {
  double bytes_in = 0;
  double bytes_out = 0;  // consumers
  double messages_in = 0;
  int64_t size = 0;  // local log size of one replica
};

struct PartitionInfo {
  std::string topic;
  int32_t partition = 0;
  std::vector<NodeId> replicas;  // first: the preferred leader
  NodeId leader{-1};
  std::vector<NodeId> isr;
  PartitionLoad load;
  bool frozen = false;  // a reassignment is running: not touched
};

// One broker's load under the model's current placement.
struct BrokerLoad {
  double network_in = 0;
  double network_out = 0;
  double leader_bytes_in = 0;
  int64_t disk = 0;
  int32_t replicas = 0;
  int32_t leaders = 0;
};

class ClusterModel {
 public:
  // Brokers first, then partitions (a replica on an unknown broker is kept
  // and counted as on a dead one).
  void AddBroker(BrokerInfo broker);
  void AddPartition(PartitionInfo partition);

  int32_t broker_count() const { return static_cast<int32_t>(brokers_.size()); }
  const BrokerInfo& broker(int32_t b) const { return brokers_[b]; }
  const BrokerLoad& load(int32_t b) const { return loads_[b]; }
  // The dense index of a broker id; -1 when unknown.
  int32_t IndexOf(NodeId id) const;
  void SetStatus(int32_t b, BrokerStatus status) { brokers_[b].status = status; }

  size_t partition_count() const { return partitions_.size(); }
  const PartitionInfo& partition(size_t p) const { return partitions_[p]; }
  // The partitions with a replica on broker b (indexes, ascending).
  std::vector<size_t> ReplicasOn(int32_t b) const;
  // Replicas of `topic_index`'s topic on broker b.
  int32_t TopicReplicas(int32_t topic_index, int32_t b) const;
  int32_t topic_index(size_t p) const { return topic_of_[p]; }
  int32_t topic_count() const { return static_cast<int32_t>(topic_names_.size()); }
  // Partitions of each topic.
  int32_t topic_partitions(int32_t t) const { return topic_sizes_[t]; }

  // What a replica of p on b adds to b's network in and (as leader) out.
  static double LeaderNetworkOut(const PartitionInfo& p);

  // Moves: applied to the placement and every broker's load at once.
  // `from` must hold a replica of p and `to` must not; the replica keeps
  // its position (and the leadership, if it had it).
  void MoveReplica(size_t p, NodeId from, NodeId to);
  // `to` must be a replica of p.
  void MoveLeader(size_t p, NodeId to);

 private:
  void Account(size_t p, int sign);
  void ShiftReplica(size_t p, NodeId id, int sign);
  void ShiftLeadership(size_t p, NodeId id, int sign);
  BrokerLoad* LoadOf(NodeId id);

  std::vector<BrokerInfo> brokers_;
  std::vector<BrokerLoad> loads_;
  std::map<NodeId, int32_t> index_;
  std::vector<PartitionInfo> partitions_;
  std::vector<int32_t> topic_of_;
  std::map<std::string, int32_t> topic_index_;
  std::vector<std::string> topic_names_;
  std::vector<int32_t> topic_sizes_;
  // Per topic: (broker index, replicas there), by broker index; only
  // non-zero entries (a million partitions make a map of pairs too big).
  std::vector<std::vector<std::pair<int32_t, int32_t>>> topic_replicas_;
  void AddTopicReplica(int32_t topic, int32_t b, int delta);
  // Replica lists per broker, kept in step with the placement.
  std::vector<std::vector<size_t>> on_broker_;
};

}  // namespace strata::balancer
