#pragma once
// PartitionManager: the replicas this broker hosts, by topic-partition, and
// their lifecycle on local disk. Opening one claims its directory (deleting
// an older topic's data left there), opens and recovers its log, starts its
// high watermark at the last checkpointed one and registers it with the log
// cleaner; removing one unpublishes it (what waits on it learns it is gone)
// and, once the caller has stopped everything that reads or writes it,
// deletes its data. What a replica's placement means for replication and
// tiering is the ReplicaReconciler's; this class knows only the set.
//
// Thread-safety: safe from any thread. Partitions are shared_ptr: a request
// holding one keeps its log valid while the replica is removed.
#include <filesystem>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/env.h"
#include "base/result.h"
#include "broker/partition.h"
#include "broker/topic_partition.h"
#include "cluster/metadata_store.h"
#include "cluster/records.h"
#include "storage/cleaner.h"
#include "storage/high_watermark_checkpoint.h"
#include "storage/log.h"

namespace strata::broker {

class PartitionManager {
 public:
  // Logs live in `log_dir`/<topic>-<partition>, written through `env`.
  // `cleaner` (nullable: log.cleaner.enable off) compacts the logs opened.
  PartitionManager(std::filesystem::path log_dir, cluster::NodeId self, Clock* clock, Env* env,
                   storage::LogCleaner* cleaner);

  // Reads the high watermarks the last run checkpointed; the replicas opened
  // from then on start from them. A missing or damaged checkpoint only costs
  // availability (the marks start at the log start; the ISR moves them up).
  void LoadCheckpointedMarks();
  // Told when something waiting on a replica may proceed (see
  // Partition::SetWakeListener). Set before the first Open.
  void SetWakeListener(std::function<void(const TopicPartition&)> wake) { wake_ = std::move(wake); }

  // Opens the replica of `topic`'s partition `p` with record `state` and
  // publishes it. `prepare` runs before it is published, so no request sees
  // it before, say, its remote part is attached.
  using Prepare = std::function<void(const std::shared_ptr<Partition>&)>;
  Result<std::shared_ptr<Partition>> Open(const cluster::TopicRecord& topic, int32_t p,
                                          const cluster::PartitionRecord& state,
                                          const storage::LogConfig& config,
                                          const Prepare& prepare = {});
  // Unpublishes the replica and marks it removed (its waiters are woken).
  // Its log stays until DeleteData; nullptr when not hosted.
  std::shared_ptr<Partition> Unpublish(const TopicPartition& tp);
  // Deletes an unpublished replica's data; the caller has stopped whatever
  // appends to or uploads from it.
  Status DeleteData(Partition& partition);
  // Closes every log cleanly (flush, producer snapshots) and forgets them.
  void CloseAll();

  std::shared_ptr<Partition> Get(const TopicPartition& tp) const;
  bool Contains(const TopicPartition& tp) const { return Get(tp) != nullptr; }
  std::vector<std::shared_ptr<Partition>> All() const;
  // The replicas this broker leads as their records say (not checked against
  // fencing: see LeaderPartition for a request's check).
  std::vector<std::shared_ptr<Partition>> Led() const;
  // The hosted replicas of `topic`'s partitions [0, partitions).
  std::vector<std::shared_ptr<Partition>> OfTopic(const std::string& topic,
                                                  int32_t partitions) const;
  size_t size() const;

  // Applies a topic's changed storage configs to its hosted replicas; wakes
  // the cleaner when the topic is compacted.
  void ApplyLogConfig(const std::vector<std::shared_ptr<Partition>>& hosted,
                      const storage::LogConfig& config);
  // Writes every replica's high watermark to replication-offset-checkpoint.
  Status CheckpointHighWatermarks() const;
  // At start-up, once every placed replica is open: deletes the partition
  // directories of no replica hosted here (see local_replicas.h).
  void DeleteStrayDirs() const;
  // Bytes of every hosted log.
  int64_t TotalLogBytes() const;

 private:
  std::filesystem::path Dir(const TopicPartition& tp) const;

  const std::filesystem::path log_dir_;
  const cluster::NodeId self_;
  Clock* const clock_;
  Env* const env_;
  storage::LogCleaner* const cleaner_;
  std::function<void(const TopicPartition&)> wake_;
  storage::HighWatermarks checkpointed_marks_;  // read once, before the first Open
  mutable std::shared_mutex mu_;
  std::unordered_map<TopicPartition, std::shared_ptr<Partition>, TopicPartitionHash> partitions_;
};

}  // namespace strata::broker
