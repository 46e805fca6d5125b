#pragma once
// TopicManager: the broker's topics and the open Log of each partition. It
// applies topic admin (create, delete, add partitions, alter configs) to both
// the MetadataStore and the local logs, runs periodic retention, and owns the
// log cleaner (compaction of cleanup.policy=compact topics; every log is
// registered with it, it picks the compacted ones).
//
// Thread-safety: safe from any thread. Logs are shared_ptr so a fetch that
// holds one keeps it valid while the topic is deleted concurrently.
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "broker/disk_high_mark.h"
#include "broker/topic_partition.h"
#include "cluster/metadata_store.h"
#include "config/broker_config.h"
#include "storage/cleaner.h"
#include "storage/log.h"
#include "tiered/remote_log_manager.h"

namespace strata::broker {

// A topic's record plus its resolved storage settings, cached so the produce
// path does not re-resolve configs per request. Immutable once published.
struct TopicInfo {
  cluster::TopicRecord record;
  storage::LogConfig log_config;
  int32_t min_insync_replicas = 1;
};

class TopicManager {
 public:
  TopicManager(const config::BrokerConfig& config, cluster::MetadataStore& store, Clock* clock);
  ~TopicManager();

  // Opens the logs of every topic in the store (running recovery) and
  // starts the log cleaner when log.cleaner.enable.
  Status Start();
  // Stops the cleaner, then closes every log cleanly (flush, producer snapshots).
  void Shutdown();

  // Creates the topic in the store and its partition logs.
  Result<cluster::TopicRecord> CreateTopic(cluster::TopicRecord topic);
  Status DeleteTopic(const std::string& name);
  Status AddPartitions(const std::string& name, int32_t total);
  Status SetTopicConfigs(const std::string& name, std::map<std::string, std::string> configs);
  // Changes the overrides by `mutate` atomically in the store (see
  // MetadataStore::UpdateTopicConfigs), then applies the result locally.
  Status UpdateTopicConfigs(const std::string& name,
                            const cluster::MetadataStore::ConfigMutation& mutate);

  std::shared_ptr<storage::Log> GetLog(const TopicPartition& tp) const;
  std::optional<cluster::TopicRecord> GetTopic(const std::string& name) const;
  // Cached topic view; nullptr if the topic does not exist.
  std::shared_ptr<const TopicInfo> GetTopicInfo(const std::string& name) const;
  std::vector<cluster::TopicRecord> ListTopics() const;

  // Applies retention to every log; returns segments deleted.
  int EnforceRetention();
  // fsyncs the logs whose flush.ms has elapsed with unflushed data (Kafka's
  // log flusher; with the default flush.ms nothing is due).
  void FlushDue();

  // Tiered storage (remote.log.storage.system.enable); nullptr when disabled.
  tiered::RemoteLogManager* remote() const { return remote_.get(); }
  // The partition's log start offset, remote segments included.
  int64_t LogStartOffset(const TopicPartition& tp, const storage::Log& log) const;

  // Why produce is refused right now (local disk above the high mark), or
  // nullopt. Cheap: usage is sampled at most once a second.
  std::optional<std::string> ProduceBlockedReason() { return high_mark_->Check(); }
  // Total bytes of every partition log on this broker.
  int64_t TotalLogBytes() const;

  // The log cleaner's counters (for metrics); nullptr when disabled.
  const storage::LogCleaner* cleaner() const { return cleaner_.get(); }

 private:
  Status OpenPartitions(const cluster::TopicRecord& topic, int32_t from, int32_t to);
  std::filesystem::path PartitionDir(const TopicPartition& tp) const;
  void PublishTopicInfo(const cluster::TopicRecord& record);  // caller holds no lock
  Status StartRemote();
  // Registers the partition with the remote log manager (or removes it when
  // the topic is not tiered).
  void UpdateTiering(const cluster::TopicRecord& topic, int32_t partition,
                     const std::shared_ptr<storage::Log>& log, const storage::LogConfig& config);

  const config::BrokerConfig& config_;
  cluster::MetadataStore& store_;
  Clock* clock_;
  std::mutex admin_mu_;  // serialises topic admin operations
  mutable std::shared_mutex mu_;
  std::unordered_map<TopicPartition, std::shared_ptr<storage::Log>, TopicPartitionHash> logs_;
  std::unordered_map<std::string, std::shared_ptr<const TopicInfo>> infos_;
  std::unique_ptr<storage::LogCleaner> cleaner_;      // null unless log.cleaner.enable
  std::unique_ptr<tiered::RemoteLogManager> remote_;  // null unless tiered storage is on
  std::unique_ptr<DiskHighMark> high_mark_;           // produce back-pressure
};

}  // namespace strata::broker
