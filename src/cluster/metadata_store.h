#pragma once
// MetadataStore: the cluster's durable metadata (cluster id, topics with their
// ids, partition counts and config overrides, producer-id blocks, remote log
// bounds). cluster::Metadata implements it over a KvStore (embedded or etcd),
// so brokers never depend on where metadata lives.
//
// Thread-safety: all methods are safe to call concurrently.
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "cluster/replica_placement.h"
#include "cluster/types.h"

namespace strata::cluster {

using TopicId = std::array<uint8_t, 16>;

struct TopicRecord {
  std::string name;
  TopicId id{};
  int32_t partitions = 1;
  int16_t replication_factor = 1;
  std::map<std::string, std::string> configs;  // overrides only
  bool internal = false;
};

// A tiered partition's remote log bounds, kept in cluster metadata (KIP-405
// keeps them in its remote log metadata) so they are known while the remote
// store is down and, with a shared backend, by every replica. -1 = none.
struct RemoteLogOffsets {
  int64_t start = -1;      // first offset in remote storage
  int64_t end = -1;        // last offset in remote storage
  int64_t log_start = -1;  // log start set by DeleteRecords inside remote data
  // The epoch of the leader that saved them, whose manifest lists the
  // segments (tiered::ManifestName); kNoLeaderEpoch on a single broker.
  LeaderEpoch leader_epoch = kNoLeaderEpoch;
  bool operator==(const RemoteLogOffsets&) const = default;
};

class MetadataStore {
 public:
  virtual ~MetadataStore() = default;

  virtual std::string cluster_id() const = 0;

  // kAlreadyExists if a topic with that name exists. Assigns a random id.
  // `replicas` places each partition (its first replica leads); empty puts
  // every partition on this broker alone.
  virtual Result<TopicRecord> CreateTopic(TopicRecord topic, ReplicaAssignment replicas = {}) = 0;
  // kNotFound if absent.
  virtual Status DeleteTopic(const std::string& name) = 0;
  virtual std::optional<TopicRecord> GetTopic(const std::string& name) const = 0;
  virtual std::vector<TopicRecord> ListTopics() const = 0;
  // Only grows (kInvalidArgument otherwise); `replicas` places the new
  // partitions as CreateTopic's does.
  virtual Status SetPartitionCount(const std::string& name, int32_t partitions,
                                   ReplicaAssignment replicas = {}) = 0;
  // Replaces the topic's config overrides.
  virtual Status SetTopicConfigs(const std::string& name,
                                 std::map<std::string, std::string> configs) = 0;
  // Changes the overrides by `mutate` on the stored ones, atomically: a
  // concurrent change is never lost (the mutation is re-run on the newer
  // overrides). An error from `mutate` aborts with nothing written.
  using ConfigMutation = std::function<Status(std::map<std::string, std::string>&)>;
  virtual Status UpdateTopicConfigs(const std::string& name, const ConfigMutation& mutate) = 0;

  // Remote log bounds of (topic id, partition); topic_id in Kafka's base64
  // text form. Deleting the topic removes them. kFenced, and nothing
  // written, when a leader of a newer epoch saved its own.
  virtual Status SetRemoteLogOffsets(const std::string& topic_id, int32_t partition,
                                     const RemoteLogOffsets& offsets) = 0;
  // A new leader taking over the remote log: saves `offsets` (its epoch)
  // only while the stored bounds are still `seen` (nullopt: none), the
  // ones its manifest was loaded by; kUnavailable if they changed (load
  // again), kFenced if a newer leader saved its own.
  virtual Status ClaimRemoteLog(const std::string& topic_id, int32_t partition,
                                const std::optional<RemoteLogOffsets>& seen,
                                const RemoteLogOffsets& offsets) = 0;
  virtual std::optional<RemoteLogOffsets> GetRemoteLogOffsets(const std::string& topic_id,
                                                              int32_t partition) const = 0;
  // Remote directories of deleted tiered partitions that still have to be
  // removed from the remote store (it may be down when the topic goes).
  virtual Status AddPendingRemoteDeletion(const std::string& remote_dir) = 0;
  virtual Status RemovePendingRemoteDeletion(const std::string& remote_dir) = 0;
  virtual std::vector<std::string> PendingRemoteDeletions() const = 0;
  // Reserves `count` producer ids; returns the first. Never returns an id twice,
  // across restarts.
  virtual Result<int64_t> AllocateProducerIds(int64_t count) = 0;
};

// Opens (or initialises) the embedded store kept under `dir` (a Metadata over
// an EmbeddedKvStore), importing a pre-KvStore strata-metadata.json once.
Result<std::unique_ptr<MetadataStore>> OpenEmbeddedMetadataStore(const std::filesystem::path& dir);

// Random 16-byte ids; never all zeros (Kafka reserves the zero UUID).
TopicId RandomTopicId();
// Kafka's text form of a UUID: URL-safe base64 without padding (22 chars).
std::string UuidToBase64(const TopicId& id);

}  // namespace strata::cluster
