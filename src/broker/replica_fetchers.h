#pragma once
// ReplicaFetchers: the fetch loops this broker runs as a follower, per
// leader broker (num.replica.fetchers of them, partitions spread by hash as
// Kafka's AbstractFetcherManager does), and which partition each follows.
// The reconciler calls Sync for every replica after applying its record, so
// a new leader or leader epoch moves the partition to the right loop.
//
// Thread-safety: all methods are safe from any thread (one mutex).
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "broker/partition.h"
#include "cluster/metadata_view.h"
#include "config/broker_config.h"
#include "replication/replica_fetcher.h"

namespace strata::broker {

class ReplicaFetchers {
 public:
  // `on_leader_unreachable` hears of every failed fetch from a leader.
  // `throttle`: follower.replication.throttled.rate, shared by every loop.
  ReplicaFetchers(const config::BrokerConfig& config, cluster::MetadataView& view,
                  cluster::NodeId self, std::shared_ptr<replication::ReplicationThrottle> throttle,
                  std::function<void(cluster::NodeId)> on_leader_unreachable = {});
  ~ReplicaFetchers();

  // Follows `partition` from its leader at its leader epoch, or stops
  // following it when this broker leads it or nobody does. `tiered`: its
  // topic has remote storage (and no compaction), so the replica never
  // copies what remote storage holds.
  // `throttled`: whether its fetches count against the follower throttle now.
  void Sync(const std::shared_ptr<Partition>& partition, bool tiered,
            std::function<bool()> throttled = {});
  void Stop(const TopicPartition& tp);
  // Stops every loop (before the logs close).
  void Shutdown();
  // Fetchers created from now on connect with TLS (an SSL inter-broker listener).
  void SetSecurity(net::ClientSecurity security);

  size_t followed() const;
  int64_t bytes_fetched() const;

 private:
  struct Source {
    std::string host;
    uint16_t port = 0;
    std::vector<std::unique_ptr<replication::ReplicaFetcher>> fetchers;
  };
  struct Assignment {
    cluster::NodeId leader{-1};
    cluster::LeaderEpoch leader_epoch{-1};
    size_t fetcher = 0;
  };
  void StopLocked(const TopicPartition& tp);
  replication::ReplicaFetcher* FetcherLocked(cluster::NodeId leader, size_t index);

  const cluster::NodeId self_;
  cluster::MetadataView& view_;
  replication::FetcherOptions options_;
  std::function<void(cluster::NodeId)> on_leader_unreachable_;
  size_t fetchers_per_source_ = 1;
  mutable std::mutex mu_;
  std::map<cluster::NodeId, Source> sources_;
  std::unordered_map<TopicPartition, Assignment, TopicPartitionHash> assigned_;
};

}  // namespace strata::broker
