#pragma once
// TopicManager: the broker's topics and its replicas of their partitions,
// the one object the Kafka API layer, the coordinators and the balancer reach
// them through. Topic admin (create, delete, add partitions, alter configs)
// writes cluster metadata; every broker then follows its watched view: the
// ReplicaReconciler opens, changes and removes the replicas hosted here
// (PartitionManager), and this class attaches what follows a replica's
// placement and leadership: its follower fetcher, its tiering, the ISR
// updates of the partitions it leads. It also runs retention, the log
// flusher and the log cleaner (compaction of cleanup.policy=compact topics).
//
// Thread-safety: safe from any thread. Partitions and logs are shared_ptr so
// a fetch that holds one keeps it valid while the topic is deleted.
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/env.h"
#include "base/result.h"
#include "broker/disk_high_mark.h"
#include "broker/isr_updater.h"
#include "broker/partition.h"
#include "broker/partition_manager.h"
#include "broker/peer_liveness.h"
#include "broker/reassignment_progress.h"
#include "broker/reconciler.h"
#include "broker/replica_fetchers.h"
#include "broker/replica_reconciler.h"
#include "broker/replication_throttles.h"
#include "broker/topic_infos.h"
#include "broker/topic_partition.h"
#include "cluster/metadata.h"
#include "config/broker_config.h"
#include "replication/replication_throttle.h"
#include "storage/cleaner.h"
#include "storage/log.h"
#include "tiered/remote_log_manager.h"

namespace strata::broker {

// The cluster-wide entity of dynamic broker configs (--entity-default).
inline constexpr const char* kDefaultBrokerEntity = "default";

class TopicManager : private IsrUpdater::Host, private ReplicaReconciler::Host {
 public:
  // Every replica's log, its directory marker and the high-watermark
  // checkpoint are written through `env` (tests fill the disk with it).
  TopicManager(const config::BrokerConfig& config, cluster::Metadata& metadata, Clock* clock,
               Env* env = Env::Default());
  ~TopicManager() override;

  // Opens the replicas placed on this broker (running log recovery), then
  // follows the metadata view; starts the log cleaner when log.cleaner.enable.
  Status Start();
  // Stops reconciling and the cleaner, then closes every log cleanly (flush,
  // producer snapshots).
  void Shutdown();

  // Each writes the store and returns once this broker has reconciled the
  // change (its own replicas open or gone); other brokers follow by watch.
  // `replicas` as MetadataStore::CreateTopic (empty: this broker alone).
  Result<cluster::TopicRecord> CreateTopic(cluster::TopicRecord topic,
                                           cluster::ReplicaAssignment replicas = {});
  Status DeleteTopic(const std::string& name);
  Status AddPartitions(const std::string& name, int32_t total,
                       cluster::ReplicaAssignment replicas = {});
  Status SetTopicConfigs(const std::string& name, std::map<std::string, std::string> configs);
  // Changes the overrides by `mutate` atomically in the store (see
  // MetadataStore::UpdateTopicConfigs), then applies the result locally.
  Status UpdateTopicConfigs(const std::string& name,
                            const cluster::MetadataStore::ConfigMutation& mutate);

  // Reconciles with the view now, on the calling thread (controlled
  // shutdown: the partitions learn their new leaders before the stop).
  Status ReconcileNow();
  // Installs the dynamic broker configs of the view now (after this broker
  // changed them) and applies them to every topic; the reconciler does the
  // same on its own for changes made elsewhere.
  Status ApplyDynamicBrokerConfigs();

  // This broker's replica, or nullptr.
  std::shared_ptr<Partition> GetPartition(const TopicPartition& tp) const;
  // Every replica hosted here.
  std::vector<std::shared_ptr<Partition>> LocalPartitions() const;
  std::shared_ptr<storage::Log> GetLog(const TopicPartition& tp) const;
  // The partition for a request that needs its leader: see CheckLeader.
  LeaderLookup LeaderPartition(const TopicPartition& tp, int32_t current_leader_epoch) const;
  // The partition for a consumer's fetch, which a follower may serve too
  // (KIP-392): see CheckReplica.
  LeaderLookup ReplicaPartition(const TopicPartition& tp, int32_t current_leader_epoch) const;
  cluster::NodeId self() const { return self_; }
  // Told whenever something a request may be waiting on changes for a
  // partition: a follower's high watermark moved (from the replica fetch
  // threads: consumers long-polling a follower wake up), or its leader or
  // leader epoch changed, or the replica was removed (from the reconciling
  // thread: an acks=all produce waiting there learns it is deposed). Set
  // before Start.
  void SetWakeListener(std::function<void(const TopicPartition&)> listener) {
    partitions_->SetWakeListener(std::move(listener));
  }
  // Told when this broker starts or stops leading a partition it hosts
  // (opened as leader, leader changed, replica removed while leading), from
  // whichever thread reconciles, with the reconciliation lock held: it must
  // not call back into the TopicManager's admin operations. On being set, it
  // is called at once for every partition this broker leads now.
  using LeadershipListener = ReplicaReconciler::LeadershipListener;
  void SetLeadershipListener(LeadershipListener listener);
  // Set while the broker's lease is known lost (BrokerSession::lease_lost):
  // it leads nothing until registered again.
  void SetFenced(bool fenced) { fenced_.store(fenced); }
  // A broker back with a new (empty) log directory, registered at revision
  // `lost_before` (INT64_MAX until it has registered; 0: nothing lost), opens
  // no replica whose record still counts on the data it lost
  // (cluster::CountsOnLostData) until the controller has forgotten it there.
  // Opened, the replica could lead with an empty log (the record may still
  // name it leader, its lease having outlived the old process), or, as a
  // follower still in the ISR, start at the leader's log end and count toward
  // the high watermark for records it never had (Kafka avoids the same by
  // fencing such a broker until the controller has cleaned its ISRs,
  // KAFKA-18106). Set before Start and again when registered.
  void SetLostDataBefore(int64_t lost_before) { replicas_->SetLostDataBefore(lost_before); }
  std::optional<cluster::TopicRecord> GetTopic(const std::string& name) const;
  // Cached topic view; nullptr if the topic does not exist.
  std::shared_ptr<const TopicInfo> GetTopicInfo(const std::string& name) const;
  std::vector<cluster::TopicRecord> ListTopics() const;

  // Writes every partition's high watermark to replication-offset-checkpoint
  // (every replica.high.watermark.checkpoint.interval.ms, and at shutdown).
  Status CheckpointHighWatermarks() { return partitions_->CheckpointHighWatermarks(); }
  // The partition's high watermark, first moved as far as its ISR allows.
  Offset HighWatermark(Partition& partition) const;

  // Replication figures for /metrics (Kafka's ReplicaManager metrics).
  struct ReplicationStats {
    int64_t under_replicated = 0;  // led partitions whose ISR lacks a replica
    int64_t under_min_isr = 0;     // led partitions whose ISR is below min.insync.replicas
    int64_t non_contiguous = 0;    // led partitions with a replica not contiguous with remote
    int64_t followed = 0;          // partitions this broker follows
    int64_t fetched_bytes = 0;     // bytes appended from leaders
    int64_t isr_shrinks = 0;       // ISR changes written that removed a replica
    int64_t isr_expands = 0;       // ... that added one
    int64_t max_follower_lag = 0;  // offsets the most-behind followed partition lacks
  };
  ReplicationStats replication_stats() const;
  // Each followed partition's lag behind its leader's high watermark.
  std::vector<std::pair<TopicPartition, int64_t>> FollowerLags() const;
  // Leader: how long each follower of each partition led here has not been
  // caught up (the time replica.lag.time.max.ms is compared with).
  struct FollowerTimeLag {
    TopicPartition tp;
    cluster::NodeId replica;
    int64_t lag_ms = 0;
  };
  std::vector<FollowerTimeLag> FollowerTimeLags() const;

  // Applies retention to every log; returns segments deleted.
  int EnforceRetention();
  // The TLS context replica fetchers connect to leaders with (before Start).
  void SetInterBrokerSecurity(net::ClientSecurity security);
  // Forgets, on every hosted partition, producers idle for `expiration_ms`
  // (producer.id.expiration.ms); returns how many went.
  size_t ExpireProducers(int64_t expiration_ms);
  // Followers of tiered partitions: local retention may drop what the
  // leader recorded as remote in the metadata store.
  void FollowSharedRemoteEnd();
  // fsyncs the logs whose flush.ms has elapsed with unflushed data (Kafka's
  // log flusher; with the default flush.ms nothing is due).
  void FlushDue();

  // Tiered storage (remote.log.storage.system.enable); nullptr when disabled.
  tiered::RemoteLogManager* remote() const { return remote_.get(); }
  // The partition's log start offset, remote segments included.
  Offset LogStartOffset(const TopicPartition& tp, const storage::Log& log) const;

  // Replication throttles (Kafka's replication quotas, set by
  // kafka-reassign-partitions --throttle; ReplicationThrottles). Whether
  // `replica` of `p` is throttled on the side whose throttled-replicas topic
  // config is `list_config`, for the replica `named` there.
  bool ReplicaThrottled(const Partition& p, const char* list_config, cluster::NodeId named,
                        cluster::NodeId replica) const;
  replication::ReplicationThrottle& leader_throttle() { return throttles_.leader(); }
  // The copies of the replicas reassignments add to partitions led here.
  std::vector<ReplicaCopyProgress> ReassignmentCopies() const { return progress_.Snapshot(); }
  // The follower fetcher's check for replica `p` here.
  std::function<bool()> FollowerThrottled(const std::shared_ptr<Partition>& p) const;

  // Why produce is refused right now (local disk above the high mark), or
  // nullopt. Cheap: usage is sampled at most once a second.
  std::optional<std::string> ProduceBlockedReason() { return high_mark_->Check(); }
  // Total bytes of every partition log on this broker.
  int64_t TotalLogBytes() const { return partitions_->TotalLogBytes(); }

  // The log cleaner's counters (for metrics); nullptr when disabled.
  const storage::LogCleaner* cleaner() const { return cleaner_.get(); }

 private:
  // One pass of the ReplicaReconciler. Caller holds admin_mu_.
  Status ReconcileLocked() { return replicas_->Pass(); }
  void StartReconciler();
  // ReplicaReconciler::Host. UpdateTiering: registers the partition with
  // the remote log manager when the topic is tiered: to tier it when this
  // broker leads it, else (in a cluster) to read from it only; removes it
  // otherwise.
  bool RefreshDynamicConfigs() override;  // caller holds admin_mu_
  void UpdateTiering(const TopicInfo& info, const std::shared_ptr<Partition>& partition) override;
  void SyncFetcher(const TopicInfo& info, const std::shared_ptr<Partition>& partition) override;
  void Release(const TopicPartition& tp, bool delete_remote) override;
  // IsrUpdater::Host. ContiguityBound: remote log end + 1, or the
  // partition's log start when higher.
  std::vector<std::shared_ptr<Partition>> LedPartitions() const override {
    return partitions_->Led();
  }
  int MinInsyncReplicas(const std::string& topic) const override {
    return infos_.MinInsyncReplicas(topic);
  }
  Offset ContiguityBound(const Partition& p) const override;
  // A smaller ISR may let the high watermark move with no fetch or produce
  // to move it (Kafka completes its delayed produces then too).
  void IsrChanged(Partition& p) override {
    p.MaybeAdvanceHighWatermark(MinInsyncReplicas(p.tp().topic));
  }
  void BeforePass() override { throttles_.Refresh(); }
  bool Fenced() const override { return fenced_.load(); }
  Status StartRemote();

  const config::BrokerConfig& config_;
  cluster::Metadata& metadata_;
  cluster::MetadataStore& store_;
  const cluster::NodeId self_;
  const bool cluster_metadata_;  // etcd: leader epochs fence tiering
  Clock* clock_;
  Env* const env_;
  std::atomic<bool> fenced_{false};
  std::mutex admin_mu_;  // serialises topic admin and reconciliation passes
  TopicInfos infos_;
  std::unique_ptr<storage::LogCleaner> cleaner_;      // null unless log.cleaner.enable
  std::unique_ptr<PartitionManager> partitions_;      // the replicas hosted here
  std::unique_ptr<tiered::RemoteLogManager> remote_;  // null unless tiered storage is on
  std::unique_ptr<DiskHighMark> high_mark_;           // produce back-pressure
  std::unique_ptr<PeerLiveness> peers_;               // before fetchers_: they report to it
  ReplicationThrottles throttles_;
  std::unique_ptr<ReplicaFetchers> fetchers_;  // this broker's follower fetch loops
  ReassignmentProgress progress_;              // updated by isr_
  // Writes the ISR changes the led partitions want (AlterPartition).
  std::unique_ptr<IsrUpdater> isr_;
  // Opens, changes and removes the replicas as the view says (a pass under
  // admin_mu_), and the thread that runs its passes as the view changes.
  std::unique_ptr<ReplicaReconciler> replicas_;
  std::unique_ptr<Reconciler> reconciler_;
};

}  // namespace strata::broker
