#pragma once
// ReplicaReconciler: makes the replicas hosted on this broker match the
// metadata view (after Redpanda's controller_backend). One pass compares the
// replicas the view places here with the open ones; removes those no longer
// placed here first (a re-created topic reuses their directories);
// publishes changed topic records and the dynamic broker configs; then opens
// what is new and applies each open replica's record, so a changed
// leadership reaches its partition, its fetcher and its tiering. A broker
// back with a new log directory holds back the replicas whose records still
// count on the data it lost (see SetLostDataBefore).
//
// Thread-safety: Pass and SetLeadershipListener must be serialised by the
// caller (TopicManager's admin lock); SetLostDataBefore from any thread.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "base/clock.h"
#include "base/result.h"
#include "broker/partition.h"
#include "broker/partition_manager.h"
#include "broker/topic_infos.h"
#include "cluster/metadata_view.h"

namespace strata::broker {

class ReplicaReconciler {
 public:
  // What else in the broker follows a replica's placement and leadership.
  class Host {
   public:
    virtual ~Host() = default;
    // Installs the view's dynamic broker configs; true when they changed
    // (every topic's effective configs may have).
    virtual bool RefreshDynamicConfigs() = 0;
    // Registers the replica for tiering as its leadership says, or not.
    virtual void UpdateTiering(const TopicInfo& info, const std::shared_ptr<Partition>& p) = 0;
    // Starts, moves or stops the replica's fetcher as its leader says.
    virtual void SyncFetcher(const TopicInfo& info, const std::shared_ptr<Partition>& p) = 0;
    // A replica is being removed: whatever appends to or uploads from it
    // stops before its data is deleted; `delete_remote`: its remote data
    // goes too.
    virtual void Release(const TopicPartition& tp, bool delete_remote) = 0;
  };
  // Told when this broker starts or stops leading a partition it hosts.
  using LeadershipListener = std::function<void(const TopicPartition& tp, bool leader)>;

  ReplicaReconciler(cluster::MetadataView& view, cluster::NodeId self, Clock* clock,
                    PartitionManager& partitions, TopicInfos& infos, Host& host);

  // One pass; the first error opening a replica is returned after the rest
  // of the pass ran.
  Status Pass();
  // Calls `listener` at once for every partition led here now, then on each
  // change.
  void SetLeadershipListener(LeadershipListener listener);
  // As TopicManager::SetLostDataBefore.
  void SetLostDataBefore(int64_t lost_before) { lost_before_.store(lost_before); }

 private:
  struct Wanted;
  using WantedMap = std::unordered_map<TopicPartition, Wanted, TopicPartitionHash>;
  // The replicas the view places here.
  WantedMap WantedReplicas(const std::vector<cluster::TopicEntry>& topics) const;
  void RemoveUnwanted(const std::vector<cluster::TopicEntry>& topics, const WantedMap& wanted);
  void RemoveReplica(const std::shared_ptr<Partition>& partition, bool topic_deleted);
  // Publishes the topics whose records (or effective configs) changed and
  // forgets the deleted ones.
  void ApplyTopicChanges(const std::vector<cluster::TopicEntry>& topics);
  void ApplyRecord(const TopicInfo& info, const std::shared_ptr<Partition>& open,
                   const cluster::PartitionRecord& state);
  Status OpenReplica(const TopicInfo& info, int32_t p, const cluster::PartitionRecord& state);
  void NotifyLeadership(const TopicPartition& tp, bool leader) {
    if (leadership_listener_) leadership_listener_(tp, leader);
  }

  cluster::MetadataView& view_;
  const cluster::NodeId self_;
  Clock* const clock_;
  PartitionManager& partitions_;
  TopicInfos& infos_;
  Host& host_;
  std::atomic<int64_t> lost_before_{0};
  LeadershipListener leadership_listener_;
  // The topic record revision each published TopicInfo came from.
  std::unordered_map<std::string, cluster::Revision> info_revisions_;
};

}  // namespace strata::broker
