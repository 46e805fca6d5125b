// Metadata's topic operations: a topic record under topics/<name> and one
// partition record per partition under partitions/<topic id>/<n>.
#include <algorithm>

#include "base/log.h"
#include "cluster/logger.h"
#include "cluster/metadata.h"
#include "cluster/partition_leadership.h"
#include "cluster/records.h"

namespace strata::cluster {

namespace {

Error TopicNotFound(const std::string& name) {
  return MakeError(Errc::kNotFound, "topic '" + name + "' not found");
}

// Tiered now, or once (remote log records outlive a switch to local).
bool MayHaveRemoteData(const TopicRecord& topic, const MetadataView& view, const KeyLayout& keys) {
  if (RemoteStorageEnabled(topic)) return true;
  return !view.RawPrefix(keys.TopicRemoteLogs(UuidToBase64(topic.id))).empty();
}

}  // namespace

Status Metadata::AddControllerFence(std::vector<KvCompare>& guards) const {
  if (!controller_fence_) return Status::Ok();
  std::optional<KvCompare> fence = controller_fence_();
  if (!fence) return MakeError(Errc::kFenced, "this broker is not the active controller");
  guards.push_back(std::move(*fence));
  return Status::Ok();
}

Status Metadata::CheckControllerFence(const std::vector<KvCompare>& guards) const {
  if (!controller_fence_ || guards.empty()) return Status::Ok();
  const KvCompare& fence = guards.back();
  STRATA_ASSIGN_OR_RETURN(RangeResult got, kv_->Get(fence.key));
  if (got.kvs.empty() || got.kvs[0].create_revision != fence.number) {
    return MakeError(Errc::kFenced, "this broker is no longer the active controller");
  }
  return Status::Ok();
}

std::vector<KvOp> Metadata::PartitionOps(const TopicRecord& topic, int32_t from, int32_t to,
                                         const ReplicaAssignment& replicas) const {
  std::vector<KvOp> ops;
  std::string id = UuidToBase64(topic.id);
  for (int32_t p = from; p < to; ++p) {
    PartitionRecord rec;
    auto i = static_cast<size_t>(p - from);
    if (i < replicas.size() && !replicas[i].empty()) {
      rec.replicas = replicas[i];
    } else {
      rec.replicas = {options_.local_node};
    }
    // Unlike Kafka, only the leader starts in the ISR: a follower of a
    // tiered partition whose first fetch comes after records were written
    // starts at the leader's active segment (replica_start.cc), and may
    // count for the high watermark only once remote storage joins up with
    // it, which the leader checks before it adds it to the ISR.
    rec.leader = rec.replicas.front();
    rec.isr = {rec.leader};
    ops.push_back(KvOp::Put(keys_.Partition(id, p), EncodePartition(rec)));
  }
  return ops;
}

Result<TopicRecord> Metadata::CreateTopic(TopicRecord topic, ReplicaAssignment replicas) {
  if (view_->Topic(topic.name)) {
    return MakeError(Errc::kAlreadyExists, "topic '" + topic.name + "' already exists");
  }
  std::vector<KvCompare> fence;
  STRATA_RETURN_IF_ERROR(AddControllerFence(fence));
  topic.id = RandomTopicId();
  // Partition records first, under the new (unique) topic id: nobody looks
  // there until the topic record that names the id exists.
  std::vector<KvOp> parts = PartitionOps(topic, 0, topic.partitions, replicas);
  auto written = WriteInBatches(*kv_, fence, parts);
  if (!written.ok()) return written.take_error();
  if (!written->succeeded) {
    STRATA_RETURN_IF_ERROR(CheckControllerFence(fence));
    return MakeError(Errc::kUnavailable, "partition records of '" + topic.name + "' not written");
  }
  std::vector<KvCompare> guards = {KvCompare::Absent(keys_.Topic(topic.name))};
  guards.insert(guards.end(), fence.begin(), fence.end());
  KvOp put = KvOp::Put(keys_.Topic(topic.name), EncodeTopic(topic));
  STRATA_ASSIGN_OR_RETURN(TxnResult r, Commit(guards, std::span(&put, 1)));
  if (!r.succeeded) {
    KvOp undo = KvOp::DeletePrefix(keys_.TopicPartitions(UuidToBase64(topic.id)));
    auto cleaned = kv_->Txn({}, std::span(&undo, 1));
    if (!cleaned.ok())
      MetadataLog()->warn("partition records of a lost topic race stay: {}",
                          cleaned.error().message);
    STRATA_RETURN_IF_ERROR(CheckControllerFence(guards));
    return MakeError(Errc::kAlreadyExists, "topic '" + topic.name + "' already exists");
  }
  return topic;
}

Status Metadata::DeleteTopic(const std::string& name) {
  for (int attempt = 0; attempt < 32; ++attempt) {
    auto entry = view_->Topic(name);
    if (!entry) return TopicNotFound(name);
    std::string id = UuidToBase64(entry->record.id);
    std::vector<KvCompare> guards = {
        KvCompare::ModRevisionIs(keys_.Topic(name), entry->mod_revision)};
    STRATA_RETURN_IF_ERROR(AddControllerFence(guards));
    std::vector<KvOp> ops = {KvOp::Delete(keys_.Topic(name)),
                             KvOp::DeletePrefix(keys_.TopicPartitions(id)),
                             KvOp::DeletePrefix(keys_.TopicRemoteLogs(id))};
    if (MayHaveRemoteData(entry->record, *view_, keys_)) {
      ops.push_back(KvOp::Put(keys_.DeletedTopic(id), EncodeTopic(entry->record)));
    }
    STRATA_ASSIGN_OR_RETURN(TxnResult r, Commit(guards, ops));
    if (r.succeeded) return Status::Ok();
    STRATA_RETURN_IF_ERROR(CheckControllerFence(guards));
    // Changed meanwhile (configs, partitions) or deleted: decide on fresh state.
    STRATA_ASSIGN_OR_RETURN(RangeResult got, kv_->Get(keys_.Topic(name)));
    if (got.kvs.empty()) return TopicNotFound(name);
    // The key's own revision: the store's may be of writes outside our prefix.
    view_->WaitForRevision(got.kvs[0].mod_revision, options_.timeout);
  }
  return MakeError(Errc::kUnavailable, "topic '" + name + "' kept changing; retry the deletion");
}

Result<PartitionRecord> Metadata::AlterPartition(const std::string& topic_id, int32_t partition,
                                                 NodeId leader, LeaderEpoch leader_epoch,
                                                 PartitionEpoch partition_epoch,
                                                 PartitionStateChange change,
                                                 int min_insync_replicas) {
  std::vector<NodeId>& isr = change.isr;
  auto entry = view_->Partition(topic_id, partition);
  if (!entry)
    return MakeError(Errc::kNotFound,
                     "no partition record " + topic_id + "/" + std::to_string(partition));
  PartitionRecord rec = entry->record;
  if (rec.leader != leader || rec.leader_epoch != leader_epoch) {
    return MakeError(Errc::kFenced, "the partition's leader is now " +
                                        std::to_string(rec.leader.value()) + " at epoch " +
                                        std::to_string(rec.leader_epoch.value()));
  }
  if (rec.partition_epoch != partition_epoch) {
    return MakeError(Errc::kOutOfRange,
                     "partition epoch " + std::to_string(partition_epoch.value()) +
                         " is not the current " + std::to_string(rec.partition_epoch.value()));
  }
  auto has = [](const std::vector<NodeId>& v, NodeId n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  bool subset = std::all_of(isr.begin(), isr.end(), [&](NodeId r) { return has(rec.replicas, r); });
  if (!subset || !has(isr, leader)) {
    return MakeError(Errc::kInvalidArgument, "an ISR must be replicas and hold the leader");
  }
  for (NodeId r : change.non_contiguous) {
    if (!has(rec.replicas, r) || has(isr, r)) {
      return MakeError(Errc::kInvalidArgument,
                       "replica " + std::to_string(r.value()) +
                           " is not contiguous with remote storage: it may not be in the ISR");
    }
  }
  std::string key = keys_.Partition(topic_id, partition);
  std::vector<KvCompare> guards{KvCompare::ModRevisionIs(key, entry->mod_revision)};
  for (NodeId r : isr) {
    if (has(rec.isr, r)) continue;
    auto b = view_->Broker(r);
    if (!b || !EligibleForLeadership(b->registration.state)) {
      return MakeError(Errc::kInvalidArgument,
                       "replica " + std::to_string(r.value()) +
                           " is ineligible to join the ISR (not registered, fenced or shutting "
                           "down)");
    }
    auto joined = change.joining_epochs.find(r);
    if (joined == change.joining_epochs.end()) continue;
    if (joined->second != b->epoch.value()) {
      return MakeError(Errc::kInvalidArgument,
                       "replica " + std::to_string(r.value()) + " fetched under broker epoch " +
                           std::to_string(joined->second) + ", not its registration's " +
                           std::to_string(b->epoch.value()) +
                           ": it registered again since, and may have lost what it had");
    }
    // Its registration unchanged when this is written: the fetches that
    // let it join were made with the log it has now.
    guards.push_back(KvCompare::CreatedAt(keys_.Broker(r), b->epoch.value()));
    if (const int64_t lost_before = LostDataBefore(b->registration, b->epoch); lost_before > 0)
      rec.forgot_lost_data[r] = lost_before;
  }
  rec.isr = std::move(isr);
  rec.non_contiguous = std::move(change.non_contiguous);
  UpdateEligibleLeaders(entry->record, rec, {min_insync_replicas, nullptr});
  rec.partition_epoch = PartitionEpoch(rec.partition_epoch.value() + 1);
  KvOp put = KvOp::Put(key, EncodePartition(rec));
  STRATA_ASSIGN_OR_RETURN(TxnResult r, Commit(guards, std::span(&put, 1)));
  if (!r.succeeded) {
    return MakeError(
        Errc::kOutOfRange,
        "the partition record, or a joining replica's registration, changed meanwhile");
  }
  return rec;
}

std::vector<Metadata::DeletedTopic> Metadata::DeletedTopics() const {
  std::vector<DeletedTopic> out;
  for (const KeyValue& kv : view_->RawPrefix(keys_.DeletedTopicsPrefix())) {
    auto topic = DecodeTopic(kv.value);
    if (!topic.ok()) {
      MetadataLog()->error("metadata record {} is unreadable: {}", kv.key, topic.error().message);
      continue;
    }
    out.push_back({std::move(*topic), kv.mod_revision});
  }
  return out;
}

Status Metadata::ForgetDeletedTopic(const DeletedTopic& deleted) {
  std::string key = keys_.DeletedTopic(UuidToBase64(deleted.topic.id));
  std::vector<KvCompare> guards = {KvCompare::ModRevisionIs(key, deleted.mod_revision)};
  STRATA_RETURN_IF_ERROR(AddControllerFence(guards));
  KvOp del = KvOp::Delete(key);
  STRATA_ASSIGN_OR_RETURN(TxnResult r, Commit(guards, std::span(&del, 1)));
  if (!r.succeeded) {
    STRATA_RETURN_IF_ERROR(CheckControllerFence(guards));
    return MakeError(Errc::kUnavailable, "record " + key + " changed meanwhile");
  }
  return Status::Ok();
}

std::optional<TopicRecord> Metadata::GetTopic(const std::string& name) const {
  auto entry = view_->Topic(name);
  if (!entry) return std::nullopt;
  return entry->record;
}

std::vector<TopicRecord> Metadata::ListTopics() const {
  std::vector<TopicRecord> out;
  for (auto& entry : view_->Topics()) out.push_back(std::move(entry.record));
  return out;
}

Status Metadata::SetPartitionCount(const std::string& name, int32_t partitions,
                                   ReplicaAssignment replicas) {
  auto entry = view_->Topic(name);
  if (!entry) return TopicNotFound(name);
  TopicRecord topic = entry->record;
  if (partitions <= topic.partitions) {
    return MakeError(Errc::kInvalidArgument, "partition count can only grow");
  }
  std::vector<KvCompare> fence;
  STRATA_RETURN_IF_ERROR(AddControllerFence(fence));
  std::vector<KvOp> parts = PartitionOps(topic, topic.partitions, partitions, replicas);
  auto written = WriteInBatches(*kv_, fence, parts);
  if (!written.ok()) return written.take_error();
  if (!written->succeeded) {
    STRATA_RETURN_IF_ERROR(CheckControllerFence(fence));
    return MakeError(Errc::kUnavailable, "partition records of '" + name + "' not written");
  }
  topic.partitions = partitions;
  std::vector<KvCompare> guards = {
      KvCompare::ModRevisionIs(keys_.Topic(name), entry->mod_revision)};
  guards.insert(guards.end(), fence.begin(), fence.end());
  KvOp put = KvOp::Put(keys_.Topic(name), EncodeTopic(topic));
  STRATA_ASSIGN_OR_RETURN(TxnResult r, Commit(guards, std::span(&put, 1)));
  if (!r.succeeded) {
    STRATA_RETURN_IF_ERROR(CheckControllerFence(guards));
    return MakeError(Errc::kUnavailable, "topic '" + name + "' changed meanwhile; retry");
  }
  return Status::Ok();
}

Status Metadata::UpdateTopicConfigs(const std::string& name, const ConfigMutation& mutate) {
  auto r = UpdateKey(keys_.Topic(name),
                     [&](const std::optional<KeyValue>& cur) -> Result<std::optional<std::string>> {
                       if (!cur) return TopicNotFound(name);
                       STRATA_ASSIGN_OR_RETURN(TopicRecord topic, DecodeTopic(cur->value));
                       STRATA_RETURN_IF_ERROR(mutate(topic.configs));
                       return std::optional<std::string>(EncodeTopic(topic));
                     });
  if (!r.ok()) return r.take_error();
  return Status::Ok();
}

Status Metadata::UpdateBrokerConfigs(const std::string& entity, const ConfigMutation& mutate) {
  auto r = UpdateKey(keys_.BrokerConfig(entity),
                     [&](const std::optional<KeyValue>& cur) -> Result<std::optional<std::string>> {
                       std::map<std::string, std::string> configs;
                       if (cur) {
                         auto decoded = DecodeConfigs(cur->value);
                         if (decoded.ok()) configs = std::move(*decoded);  // corrupt: start over
                       }
                       const auto before = configs;
                       STRATA_RETURN_IF_ERROR(mutate(configs));
                       if (cur && configs == before) return std::optional<std::string>();
                       return std::optional<std::string>(EncodeConfigs(configs));
                     });
  if (!r.ok()) return r.take_error();
  return Status::Ok();
}

std::map<std::string, std::string> Metadata::BrokerConfigs(const std::string& entity) const {
  auto raw = view_->Raw(keys_.BrokerConfig(entity));
  if (!raw) return {};
  auto decoded = DecodeConfigs(raw->value);
  if (!decoded.ok()) {
    MetadataLog()->warn("ignoring {}: {}", keys_.BrokerConfig(entity), decoded.error().message);
    return {};
  }
  return std::move(*decoded);
}

Status Metadata::SetTopicConfigs(const std::string& name,
                                 std::map<std::string, std::string> configs) {
  return UpdateTopicConfigs(name, [&](std::map<std::string, std::string>& current) {
    current = configs;
    return Status::Ok();
  });
}

}  // namespace strata::cluster
