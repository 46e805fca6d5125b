#include "cluster/metadata.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "cluster/embedded_kv_store.h"
#include "cluster/logger.h"
#include "cluster/records.h"

namespace strata::cluster {

namespace {

// Conflicting writers retry a CAS this often before giving up (kUnavailable).
constexpr int kCasAttempts = 32;

}  // namespace

Status ImportLegacyMetadata(const std::filesystem::path& dir, KvStore& kv, const KeyLayout& keys,
                            NodeId node);

Metadata::Metadata(KvStore* kv, std::unique_ptr<KvStore> owned, const MetadataOptions& options)
    : owned_kv_(std::move(owned)), kv_(kv), keys_(options.prefix), options_(options) {}

Metadata::~Metadata() {
  view_.reset();  // stops the watch before the store goes
  owned_kv_.reset();
}

Result<std::unique_ptr<Metadata>> Metadata::Open(const MetadataOptions& options) {
  std::unique_ptr<KvStore> kv;
  if (options.backend == MetadataOptions::Backend::kEtcd) {
    STRATA_ASSIGN_OR_RETURN(kv, OpenEtcdKvStore(options.etcd));
  } else {
    STRATA_ASSIGN_OR_RETURN(auto embedded, EmbeddedKvStore::Open(options.dir));
    kv = std::move(embedded);
  }
  if (options.backend == MetadataOptions::Backend::kEmbedded) {
    STRATA_RETURN_IF_ERROR(
        ImportLegacyMetadata(options.legacy_dir.empty() ? options.dir : options.legacy_dir, *kv,
                             KeyLayout(options.prefix), options.local_node));
  }
  KvStore* raw = kv.get();
  std::unique_ptr<Metadata> md(new Metadata(raw, std::move(kv), options));
  STRATA_RETURN_IF_ERROR(md->Start());
  return md;
}

Result<std::unique_ptr<Metadata>> Metadata::OpenOn(KvStore& kv, const MetadataOptions& options) {
  std::unique_ptr<Metadata> md(new Metadata(&kv, nullptr, options));
  STRATA_RETURN_IF_ERROR(md->Start());
  return md;
}

Status Metadata::Start() {
  STRATA_ASSIGN_OR_RETURN(view_, MetadataView::Open(*kv_, keys_, options_.timeout));
  return InitClusterId();
}

Status Metadata::InitClusterId() {
  // The first broker to start names the cluster; the others adopt it.
  if (auto kv = view_->Raw(keys_.ClusterId())) {
    cluster_id_ = kv->value;
    return Status::Ok();
  }
  std::string id = UuidToBase64(RandomTopicId());
  KvCompare absent = KvCompare::Absent(keys_.ClusterId());
  KvOp put = KvOp::Put(keys_.ClusterId(), id);
  STRATA_ASSIGN_OR_RETURN(TxnResult r, Commit(std::span(&absent, 1), std::span(&put, 1)));
  if (r.succeeded) {
    cluster_id_ = id;
    MetadataLog()->info("new cluster {} in {}", id, kv_->Describe());
    return Status::Ok();
  }
  STRATA_ASSIGN_OR_RETURN(RangeResult got, kv_->Get(keys_.ClusterId()));
  if (got.kvs.empty()) return MakeError(Errc::kUnavailable, "cluster id vanished while created");
  cluster_id_ = got.kvs[0].value;
  return Status::Ok();
}

Result<TxnResult> Metadata::Commit(std::span<const KvCompare> compares, std::span<const KvOp> ops) {
  STRATA_ASSIGN_OR_RETURN(TxnResult r, kv_->Txn(compares, ops));
  if (r.succeeded && !ops.empty() && !view_->WaitForRevision(r.revision, options_.timeout)) {
    // The write stands; only our view lags (the watch is reconnecting).
    MetadataLog()->warn("metadata view has not caught up with revision {} after {} ms", r.revision,
                        options_.timeout.count());
  }
  return r;
}

Result<TxnResult> Metadata::UpdateKey(
    const std::string& key,
    const std::function<Result<std::optional<std::string>>(const std::optional<KeyValue>&)>&
        update) {
  return ChangeKey(key, [&](const std::optional<KeyValue>& current) -> Result<KeyChange> {
    STRATA_ASSIGN_OR_RETURN(std::optional<std::string> next, update(current));
    return next ? KeyChange{true, std::move(next)} : KeyChange{};
  });
}

Status Metadata::CatchUpWithStore() {
  STRATA_ASSIGN_OR_RETURN(RangeResult got, kv_->Get(keys_.AclsPrefix()));
  // The newest ACL's own revision, not the store's: the view watches only
  // this cluster's keys, and another cluster sharing the etcd may have
  // written since.
  int64_t newest = 0;
  for (const KeyValue& kv : got.kvs) newest = std::max(newest, kv.mod_revision);
  if (!view_->WaitForRevision(newest, options_.timeout)) {
    return MakeError(Errc::kUnavailable,
                     fmt::format("the metadata view did not reach revision {} in {} ms", newest,
                                 options_.timeout.count()));
  }
  return Status::Ok();
}

Metadata::KeyChange Metadata::ChangeTo(const std::optional<KeyValue>& current,
                                       std::optional<std::string> next) {
  if (!current && !next) return {};
  if (current && next && current->value == *next) return {};
  return {true, std::move(next)};
}

Result<TxnResult> Metadata::ChangeKey(
    const std::string& key,
    const std::function<Result<KeyChange>(const std::optional<KeyValue>&)>& change) {
  for (int attempt = 0; attempt < kCasAttempts; ++attempt) {
    // The view first (no round trip); after a conflict, the store itself.
    std::optional<KeyValue> current = attempt == 0 ? view_->Raw(key) : std::nullopt;
    int64_t store_revision = 0;
    if (attempt > 0) {
      STRATA_ASSIGN_OR_RETURN(RangeResult got, kv_->Get(key));
      if (!got.kvs.empty()) current = got.kvs[0];
      store_revision = got.revision;
    }
    Result<KeyChange> next = change(current);
    // Nothing to change, or a refusal, by the view: it may be behind another
    // broker's write, so only the store itself can say so.
    if (attempt == 0 && (!next.ok() || !next->change)) continue;
    if (!next.ok()) return next.take_error();
    if (!next->change) {
      // Confirmed by the store: the view is brought up to the key's own
      // revision (not the store's: the view watches only this cluster's
      // keys), so that the caller reads what it was told is there.
      const int64_t key_revision = current ? current->mod_revision : 0;
      if (!view_->WaitForRevision(key_revision, options_.timeout)) {
        return MakeError(Errc::kUnavailable,
                         fmt::format("the metadata view did not reach revision {} in {} ms",
                                     key_revision, options_.timeout.count()));
      }
      return TxnResult{true, store_revision};
    }
    KvCompare guard = KvCompare::ModRevisionIs(key, current ? current->mod_revision : 0);
    KvOp op = next->value ? KvOp::Put(key, *next->value) : KvOp::Delete(key);
    STRATA_ASSIGN_OR_RETURN(TxnResult r, Commit(std::span(&guard, 1), std::span(&op, 1)));
    if (r.succeeded) return r;
  }
  return MakeError(Errc::kUnavailable, "metadata key " + key + " kept changing under us");
}

namespace {

// The stored bounds of `cur` (nullopt when absent); an unreadable record is
// an error, never taken for an absent one.
Result<std::optional<RemoteLogOffsets>> StoredRemoteLog(const std::optional<KeyValue>& cur) {
  if (!cur) return std::optional<RemoteLogOffsets>();
  STRATA_ASSIGN_OR_RETURN(RemoteLogOffsets stored, DecodeRemoteLogOffsets(cur->value));
  return std::optional<RemoteLogOffsets>(stored);
}

Error FencedBy(const RemoteLogOffsets& stored, const RemoteLogOffsets& mine) {
  return MakeError(Errc::kFenced,
                   fmt::format("the remote log was taken over at leader epoch {} (ours is {})",
                               stored.leader_epoch, mine.leader_epoch));
}

}  // namespace

Status Metadata::SetRemoteLogOffsets(const std::string& topic_id, int32_t partition,
                                     const RemoteLogOffsets& offsets) {
  return SaveRemoteLog(topic_id, partition, offsets, nullptr);
}

Status Metadata::ClaimRemoteLog(const std::string& topic_id, int32_t partition,
                                const std::optional<RemoteLogOffsets>& seen,
                                const RemoteLogOffsets& offsets) {
  return SaveRemoteLog(topic_id, partition, offsets, &seen);
}

Status Metadata::SaveRemoteLog(const std::string& topic_id, int32_t partition,
                               const RemoteLogOffsets& offsets,
                               const std::optional<RemoteLogOffsets>* expected) {
  std::string value = EncodeRemoteLogOffsets(offsets);
  auto r = UpdateKey(keys_.RemoteLog(topic_id, partition),
                     [&](const std::optional<KeyValue>& cur) -> Result<std::optional<std::string>> {
                       STRATA_ASSIGN_OR_RETURN(auto stored, StoredRemoteLog(cur));
                       if (stored && stored->leader_epoch > offsets.leader_epoch)
                         return FencedBy(*stored, offsets);
                       if (expected != nullptr && stored != *expected) {
                         return MakeError(Errc::kUnavailable,
                                          "the remote log bounds changed while loading them");
                       }
                       if (cur && cur->value == value) return std::optional<std::string>();
                       return std::optional<std::string>(value);
                     });
  if (!r.ok()) return r.take_error();
  return Status::Ok();
}

std::optional<RemoteLogOffsets> Metadata::GetRemoteLogOffsets(const std::string& topic_id,
                                                              int32_t partition) const {
  auto kv = view_->Raw(keys_.RemoteLog(topic_id, partition));
  if (!kv) return std::nullopt;
  auto o = DecodeRemoteLogOffsets(kv->value);
  if (!o.ok()) {
    MetadataLog()->error("metadata record {} is unreadable: {}", kv->key, o.error().message);
    return std::nullopt;
  }
  return *o;
}

Status Metadata::AddPendingRemoteDeletion(const std::string& remote_dir) {
  KvOp put = KvOp::Put(keys_.PendingDeletion(remote_dir), remote_dir);
  auto r = Commit({}, std::span(&put, 1));
  if (!r.ok()) return r.take_error();
  return Status::Ok();
}

Status Metadata::RemovePendingRemoteDeletion(const std::string& remote_dir) {
  // Guarded, so that a deletion of nothing (which takes no revision) is not
  // waited for as if it had one.
  KvCompare exists = KvCompare::Exists(keys_.PendingDeletion(remote_dir));
  KvOp del = KvOp::Delete(keys_.PendingDeletion(remote_dir));
  auto r = Commit(std::span(&exists, 1), std::span(&del, 1));
  if (!r.ok()) return r.take_error();
  return Status::Ok();
}

std::vector<std::string> Metadata::PendingRemoteDeletions() const {
  std::vector<std::string> out;
  for (const KeyValue& kv : view_->RawPrefix(keys_.PendingDeletionsPrefix()))
    out.push_back(kv.value);
  return out;
}

std::vector<BrokerRegistration> Metadata::KnownBrokers() const {
  std::vector<BrokerRegistration> out;
  for (const KeyValue& kv : view_->RawPrefix(keys_.KnownBrokersPrefix())) {
    if (auto b = DecodeBroker(kv.value); b.ok()) out.push_back(std::move(*b));
  }
  return out;
}

Status Metadata::UnregisterBroker(NodeId id) {
  const std::string key = keys_.KnownBroker(id);
  STRATA_ASSIGN_OR_RETURN(RangeResult known, kv_->Get(key));
  std::optional<BrokerEntry> live = view_->Broker(id);
  if (known.kvs.empty() && !live) {
    return MakeError(Errc::kNotFound,
                     "broker " + std::to_string(id.value()) + " is not registered");
  }
  if (!known.kvs.empty()) {
    KvCompare same = KvCompare::ModRevisionIs(key, known.kvs[0].mod_revision);
    KvOp drop = KvOp::Delete(key);
    STRATA_ASSIGN_OR_RETURN(TxnResult r, kv_->Txn(std::span(&same, 1), std::span(&drop, 1)));
    if (!r.succeeded) return MakeError(Errc::kUnavailable, "the broker registered again meanwhile");
    view_->WaitForRevision(r.revision, std::chrono::seconds(5));
  }
  if (live) {
    Status st = kv_->RevokeLease(live->lease);
    if (!st.ok() && st.error().code != Errc::kNotFound) return st;
  }
  return Status::Ok();
}

Result<int64_t> Metadata::AllocateProducerIds(int64_t count) {
  int64_t first = 0;
  auto r = UpdateKey(keys_.ProducerIds(),
                     [&](const std::optional<KeyValue>& cur) -> Result<std::optional<std::string>> {
                       first = 0;
                       if (cur) {
                         try {
                           first = std::stoll(cur->value);
                         } catch (const std::exception&) {
                           return MakeError(Errc::kCorrupt, "producer id block '" + cur->value +
                                                                "' is not a number");
                         }
                       }
                       return std::optional<std::string>(std::to_string(first + count));
                     });
  if (!r.ok()) return r.take_error();
  return first;
}

}  // namespace strata::cluster
