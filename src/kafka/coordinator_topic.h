#pragma once
// The internal topics a coordinator keeps its state in (__consumer_offsets,
// __transaction_state): made at the first FindCoordinator, as Kafka makes
// them, and the broker that leads one of their partitions (the coordinator of
// the keys mapped to it).
#include <map>
#include <memory>
#include <string>

#include "coordinator/coordinator_log.h"
#include "kafka/broker_context.h"
#include "kafka/cluster_state.h"
#include "kafka/commit_wait.h"
#include "protocol/error_code.h"

namespace strata::kafka {

// How to make a coordinator topic; the sizes are the broker's configs.
struct CoordinatorTopicSpec {
  std::string name;
  int32_t partitions = 1;
  int16_t replication_factor = 1;      // wanted; capped at the brokers that can hold one
  std::string replication_factor_key;  // the config it came from, for the log
  // The topic's min.insync.replicas (capped at the replication factor it gets);
  // 0 leaves the broker default.
  int32_t min_insync_replicas = 0;
  std::map<std::string, std::string> configs;
};

// Creates the topic when it does not exist yet (so it is placed over the
// brokers live by then), compacted, internal. A cap on the replication
// factor is said in the log, as the topic keeps what it was made with.
// kNone, or COORDINATOR_NOT_AVAILABLE (metadata store unreachable, or another
// broker is the active controller and was asked to make it).
protocol::ErrorCode EnsureCoordinatorTopic(BrokerContext& ctx, const CoordinatorTopicSpec& spec);

// The leader of `topic`-`partition` as reached on `listener`, or node_id -1
// while it has none (or none there).
LiveBroker CoordinatorTopicLeader(const BrokerContext& ctx, const std::string& topic,
                                  int32_t partition, std::string_view listener);

// The coordinator's view of `topic` (of `partitions` partitions): reads go
// to the partitions' logs, appends through the partitions as a leader's
// produce (stamped with its epoch, moving the high watermark, waking the
// fetches and commits waiting on it).
std::unique_ptr<coordinator::CoordinatorLog> MakeCoordinatorLog(broker::TopicManager& topics,
                                                                const std::string& topic,
                                                                int32_t partitions, Clock* clock);

// Waits until this broker's append ending at `last_offset` (as leader at
// `leader_epoch`) to `topic`-`partition` is committed, up to `timeout`.
// kDeposed also when the partition is not hosted here any more.
asio::awaitable<CommitOutcome> AwaitCoordinatorAppend(BrokerContext& ctx, const std::string& topic,
                                                      int32_t partition, Offset last_offset,
                                                      int32_t leader_epoch,
                                                      std::chrono::milliseconds timeout);

}  // namespace strata::kafka
