#pragma once
// Partition: one replica of a partition on this broker, and the one home of
// its state: the log and what cluster metadata says of it (leader, leader
// epoch, partition epoch, replicas, ISR). TopicManager creates and removes
// them as the metadata places replicas here; handlers reach them only
// through LeaderLookup, which checks leadership and epochs the way Kafka's
// ReplicaManager does.
//
// Thread-safety: safe from any thread; the log is shared so a request that
// holds it keeps it valid while the replica is removed.
#include <memory>
#include <mutex>
#include <string>

#include "broker/topic_partition.h"
#include "cluster/records.h"
#include "protocol/error_code.h"
#include "storage/log.h"

namespace strata::broker {

class Partition {
 public:
  Partition(TopicPartition tp, std::string topic_id, std::shared_ptr<storage::Log> log,
            cluster::PartitionRecord state);

  const TopicPartition& tp() const { return tp_; }
  const std::string& topic_id() const { return topic_id_; }  // base64
  const std::shared_ptr<storage::Log>& log() const { return log_; }

  cluster::PartitionRecord state() const;
  // Takes a newer record of this partition; one with an older partition
  // epoch is ignored, so the leader epoch seen here never goes back.
  void Apply(const cluster::PartitionRecord& record);
  cluster::NodeId leader() const;
  cluster::LeaderEpoch leader_epoch() const;

 private:
  const TopicPartition tp_;
  const std::string topic_id_;
  const std::shared_ptr<storage::Log> log_;
  mutable std::mutex mu_;
  cluster::PartitionRecord state_;
};

// What a request that must reach a partition's leader gets: the partition,
// or Kafka's error for why not, and the leader to tell the client about.
struct LeaderLookup {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  std::string message;
  std::shared_ptr<Partition> partition;  // set when error is kNone
  cluster::NodeId leader{-1};            // the known leader (KIP-951), -1 if none
  cluster::LeaderEpoch leader_epoch{-1};
};

// Kafka's order: an unknown topic or partition, then the request's leader
// epoch against ours (older: FENCED_LEADER_EPOCH, newer: UNKNOWN_LEADER_EPOCH;
// -1 skips the check), then leadership: a replica that does not lead, or a
// broker whose registration is fenced, is NOT_LEADER_OR_FOLLOWER.
// `partition` is null when this broker holds no replica of it.
LeaderLookup CheckLeader(const TopicPartition& tp, bool partition_exists,
                         std::shared_ptr<Partition> partition, cluster::NodeId self, bool fenced,
                         int32_t current_leader_epoch);

}  // namespace strata::broker
