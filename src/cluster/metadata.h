#pragma once
// Metadata: the broker's handle on cluster metadata. It owns the key-value
// store (embedded or etcd), the watched MetadataView that every read is
// served from, and implements MetadataStore's writes as compare-and-set
// transactions that return only once the view has caught up with them, so a
// caller reads its own writes.
//
// Thread-safety: all methods are safe to call concurrently.
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "cluster/acl_records.h"
#include "cluster/client_quota_records.h"
#include "cluster/etcd_kv_store.h"
#include "cluster/keys.h"
#include "cluster/kv_store.h"
#include "cluster/metadata_store.h"
#include "cluster/metadata_view.h"
#include "cluster/partition_reassignment.h"
#include "cluster/scram_credentials.h"
#include "cluster/types.h"

namespace strata::cluster {

struct MetadataOptions {
  enum class Backend { kEmbedded, kEtcd };
  Backend backend = Backend::kEmbedded;
  std::filesystem::path dir;         // the embedded store's directory
  std::filesystem::path legacy_dir;  // where pre-KvStore metadata files may be
  EtcdOptions etcd;
  std::string prefix = "/strata";  // strata.etcd.prefix
  // How long start-up waits for the store, and a write for the view.
  std::chrono::milliseconds timeout{10000};
  NodeId local_node{1};
};

class Metadata : public MetadataStore {
 public:
  static Result<std::unique_ptr<Metadata>> Open(const MetadataOptions& options);
  // For tests: over a store the caller keeps alive.
  static Result<std::unique_ptr<Metadata>> OpenOn(KvStore& kv, const MetadataOptions& options);
  ~Metadata() override;

  // Guards the writes only the active controller makes (topic creation and
  // deletion, new partitions): returns the election fence, or nullopt when
  // this broker is not the active controller (those writes then fail with
  // kFenced). Unset, the writes are unguarded (tests of the store alone).
  // Set once, before the broker serves.
  using ControllerFence = std::function<std::optional<KvCompare>()>;
  void SetControllerFence(ControllerFence fence) { controller_fence_ = std::move(fence); }

  KvStore& kv() { return *kv_; }
  const KeyLayout& keys() const { return keys_; }
  MetadataView& view() { return *view_; }

  std::string cluster_id() const override { return cluster_id_; }
  Result<TopicRecord> CreateTopic(TopicRecord topic, ReplicaAssignment replicas = {}) override;
  Status DeleteTopic(const std::string& name) override;
  std::optional<TopicRecord> GetTopic(const std::string& name) const override;
  std::vector<TopicRecord> ListTopics() const override;
  Status SetPartitionCount(const std::string& name, int32_t partitions,
                           ReplicaAssignment replicas = {}) override;
  Status SetTopicConfigs(const std::string& name,
                         std::map<std::string, std::string> configs) override;
  Status UpdateTopicConfigs(const std::string& name, const ConfigMutation& mutate) override;
  // Dynamic broker configs of `entity` (a node id, or "default" for every
  // broker), changed by `mutate` in one compare-and-set; read from the view.
  Status UpdateBrokerConfigs(const std::string& entity, const ConfigMutation& mutate);
  std::map<std::string, std::string> BrokerConfigs(const std::string& entity) const;
  // Every broker that ever registered and was not unregistered, as it last
  // registered (known_brokers/), from the view; unreadable records left out.
  std::vector<BrokerRegistration> KnownBrokers() const;
  // Forgets broker `id` (kafka-cluster unregister): its known-broker record
  // goes, and a live registration loses its lease (the broker, if it runs,
  // registers again with a higher epoch, as a KRaft broker would).
  // kNotFound when the broker was never registered or is already forgotten.
  Status UnregisterBroker(NodeId id);
  // A user's SCRAM credentials, changed by `change` in one compare-and-set
  // (the record goes once no mechanism is left); read from the view.
  // kNotFound from `change` passes through.
  Status UpdateScramCredentials(const std::string& user,
                                const std::function<Status(UserScramCredentials&)>& change);
  std::optional<UserScramCredentials> ScramCredentials(const std::string& user) const;
  std::vector<UserScramCredentials> AllScramCredentials() const;
  // The ACL entries of one resource pattern, changed by `change` in one
  // compare-and-set (the record goes once it has none); read from the view.
  Status UpdateAcls(
      const security::ResourcePattern& pattern,
      const std::function<Status(std::vector<security::AccessControlEntry>&)>& change);
  // Every ACL binding; unreadable records left out (and logged).
  std::vector<security::AclBinding> AllAcls() const;
  // Brings the view up to the store's current revision (a linearizable
  // read): what another broker wrote before this call is then in the view.
  // kUnavailable when the store cannot be read or the view does not catch up
  // within the metadata timeout.
  Status CatchUpWithStore();
  // The quota values of one client entity, changed by `change` in one
  // compare-and-set (the record goes once it has none); read from the view.
  Status UpdateClientQuotas(const QuotaEntity& entity,
                            const std::function<Status(std::map<std::string, double>&)>& change);
  std::vector<ClientQuotaRecord> AllClientQuotas() const;
  Status SetRemoteLogOffsets(const std::string& topic_id, int32_t partition,
                             const RemoteLogOffsets& offsets) override;
  Status ClaimRemoteLog(const std::string& topic_id, int32_t partition,
                        const std::optional<RemoteLogOffsets>& seen,
                        const RemoteLogOffsets& offsets) override;
  std::optional<RemoteLogOffsets> GetRemoteLogOffsets(const std::string& topic_id,
                                                      int32_t partition) const override;
  Status AddPendingRemoteDeletion(const std::string& remote_dir) override;
  Status RemovePendingRemoteDeletion(const std::string& remote_dir) override;
  std::vector<std::string> PendingRemoteDeletions() const override;
  Result<int64_t> AllocateProducerIds(int64_t count) override;

  // Starts a reassignment of one partition towards `target`, or cancels the
  // one in progress (nullopt): as the active controller, by compare-and-set
  // (partition_reassignment.h has the rules; their refusals come back in
  // ReassignmentChange::error). kNotFound for an unknown partition, kFenced
  // for a broker that is not the controller.
  Result<ReassignmentChange> AlterReassignment(const std::string& topic_id, int32_t partition,
                                               const std::optional<std::vector<NodeId>>& target);
  // AlterPartition, as a partition's leader sends it to Kafka's controller,
  // here a compare-and-set on the partition record: the ISR and the
  // replicas not contiguous with remote storage become `change`'s, and the
  // partition epoch grows. kFenced when the record no longer names
  // `leader` at `leader_epoch` (FENCED_LEADER_EPOCH); kOutOfRange when its
  // partition epoch is not `partition_epoch` (INVALID_UPDATE_VERSION: the
  // caller has not seen the latest record); kInvalidArgument for an ISR
  // that is not a subset of the replicas holding the leader, or that adds a
  // broker not registered, fenced or in controlled shutdown (Kafka's
  // INELIGIBLE_REPLICA), or an ISR holding a replica `change` marks not
  // contiguous. The eligible leader replicas follow the change
  // (UpdateEligibleLeaders with the topic's `min_insync_replicas`).
  Result<PartitionRecord> AlterPartition(const std::string& topic_id, int32_t partition,
                                         NodeId leader, LeaderEpoch leader_epoch,
                                         PartitionEpoch partition_epoch,
                                         PartitionStateChange change, int min_insync_replicas);

  // A tiered topic's deletion leaves a DeletedTopic record (in the same
  // transaction), so its remote data is deleted even when no replica of
  // it was up to do so; the controller deletes the data and then the record.
  struct DeletedTopic {
    TopicRecord topic;
    Revision mod_revision = 0;
  };
  std::vector<DeletedTopic> DeletedTopics() const;
  // Drops the record once the data is gone: guarded by its revision and
  // the controller fence.
  Status ForgetDeletedTopic(const DeletedTopic& deleted);

 private:
  Metadata(KvStore* kv, std::unique_ptr<KvStore> owned, const MetadataOptions& options);
  Status Start();
  Status InitClusterId();
  // Runs a transaction and waits for the view to apply it. Every op must
  // change something when the compares hold (a no-op takes no revision of
  // ours to wait for).
  Result<TxnResult> Commit(std::span<const KvCompare> compares, std::span<const KvOp> ops);
  // SetRemoteLogOffsets and, with `expected`, ClaimRemoteLog.
  Status SaveRemoteLog(const std::string& topic_id, int32_t partition,
                       const RemoteLogOffsets& offsets,
                       const std::optional<RemoteLogOffsets>* expected);
  // The partition records of [from, to): replicas[p - from] or, when
  // empty, the local broker. The first replica leads; the ISR is the leader
  // alone until followers replicate (a follower without the data must never
  // be elected).
  std::vector<KvOp> PartitionOps(const TopicRecord& topic, int32_t from, int32_t to,
                                 const ReplicaAssignment& replicas) const;
  // Appends the controller fence to `guards`; kFenced when not controller.
  Status AddControllerFence(std::vector<KvCompare>& guards) const;
  // After a failed transaction guarded by `guards`: kFenced when the
  // controller fence (the last guard) no longer holds, else OK.
  Status CheckControllerFence(const std::vector<KvCompare>& guards) const;
  // Read-modify-write of one key by CAS, retried on conflict. `update`
  // returns the new value, or nullopt to leave the key as it is.
  Result<TxnResult> UpdateKey(
      const std::string& key,
      const std::function<Result<std::optional<std::string>>(const std::optional<KeyValue>&)>&
          update);
  // What a change makes of a key: left as it is, a new value, or deleted.
  struct KeyChange {
    bool change = false;
    std::optional<std::string> value;  // nullopt with `change`: delete the key
  };
  // The change from `current` to `next` (nullopt: no record): none when equal.
  static KeyChange ChangeTo(const std::optional<KeyValue>& current,
                            std::optional<std::string> next);
  // UpdateKey that may also delete the key (a record with nothing left).
  Result<TxnResult> ChangeKey(
      const std::string& key,
      const std::function<Result<KeyChange>(const std::optional<KeyValue>&)>& change);

  std::unique_ptr<KvStore> owned_kv_;
  KvStore* kv_;
  KeyLayout keys_;
  MetadataOptions options_;
  std::unique_ptr<MetadataView> view_;
  std::string cluster_id_;
  ControllerFence controller_fence_;
};

}  // namespace strata::cluster
