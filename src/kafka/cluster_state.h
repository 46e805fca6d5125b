#pragma once
// What the handlers tell clients about the cluster, from the watched
// metadata view: the live brokers (registered, with this broker's listener
// name) and each partition's leader, epoch, replicas and ISR.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/records.h"
#include "cluster/replica_placement.h"
#include "kafka/broker_context.h"

namespace strata::kafka {

struct LiveBroker {
  int32_t node_id = -1;
  std::string host;
  int32_t port = 0;
  std::optional<std::string> rack;
};

// The registered brokers, by node id, as reached on `listener` (a broker
// without that listener is left out); this broker itself while its own
// registration is not yet visible. Clients' answers use the listener their
// request came in on (net::Request::listener), a broker's own calls
// InterBrokerListener.
std::vector<LiveBroker> LiveBrokers(const BrokerContext& ctx, std::string_view listener);
// The listener this broker reaches other brokers on.
std::string_view InterBrokerListener(const BrokerContext& ctx);

// The brokers new replicas may go to: registered and active (not fenced,
// standby or draining), this broker included while its own registration is
// not yet visible.
std::vector<cluster::PlacementBroker> PlacementBrokers(const BrokerContext& ctx);

// Places `partitions` new partitions (from `first_partition`) over
// PlacementBrokers with a random start, as Kafka does.
Result<cluster::ReplicaAssignment> PlaceNewReplicas(const BrokerContext& ctx, int32_t partitions,
                                                    int16_t replication_factor,
                                                    int32_t first_partition);

// Registrations in state `fenced` (DescribeCluster v2 lists them on request).
std::vector<LiveBroker> FencedBrokers(const BrokerContext& ctx, std::string_view listener);

// The active controller's node id (this broker while none is elected, as a
// single broker is its own controller).
int32_t ControllerId(const BrokerContext& ctx);

// A partition as clients are told of it (Metadata, DescribeTopicPartitions,
// FindCoordinator): its record from the view, and which of its replicas are
// on brokers that are not live. A leader that is not live is no leader, as
// in Kafka: leader() is then kNoNode, while the record keeps its epoch
// (KIP-320 wants it even without a leader).
struct PartitionState {
  cluster::PartitionRecord record;
  std::vector<cluster::NodeId> offline_replicas;
  bool leader_available = false;
  cluster::NodeId leader() const { return leader_available ? record.leader : cluster::kNoNode; }
};

// Node ids as the wire carries them.
std::vector<int32_t> WireIds(const std::vector<cluster::NodeId>& ids);

// The partitions [0, count) of a topic, from their records; a partition
// without a record (a topic made before records existed) is this broker's.
std::vector<PartitionState> PartitionStates(const BrokerContext& ctx,
                                            const cluster::TopicRecord& topic,
                                            const std::vector<LiveBroker>& live);

// One partition's state (as PartitionStates, without copying the others).
PartitionState PartitionStateOf(const BrokerContext& ctx, const cluster::TopicRecord& topic,
                                int32_t partition, const std::vector<LiveBroker>& live);

}  // namespace strata::kafka
