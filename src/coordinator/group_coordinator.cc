// GroupCoordinator: group table, the rebalance requests' way to their group
// (ClassicRebalance decides what they do to it), Tick, and start-up replay.
// Offsets are in coordinator_offsets.cc, administration in
// coordinator_admin.cc, partition residency in coordinator_partitions.cc.
#include "coordinator/group_coordinator.h"

#include "base/log.h"
#include "coordinator/group_records.h"
#include "coordinator/key_partitioner.h"
#include "coordinator/logger.h"

namespace strata::coordinator {

namespace {

using protocol::ErrorCode;

protocol::JoinGroupResponse JoinRefused(ErrorCode code, std::string member_id) {
  protocol::JoinGroupResponse r;
  r.error_code = Code(code);
  r.member_id = std::move(member_id);
  return r;
}

protocol::SyncGroupResponse SyncRefused(ErrorCode code) {
  protocol::SyncGroupResponse r;
  r.error_code = Code(code);
  return r;
}

// What replay accumulates for one group.
struct LoadedGroup {
  std::optional<GroupMetadataValue> metadata;
  std::vector<ConsumerGroupRecord> consumer;  // KIP-848 records, in log order
  OffsetMap offsets;
  std::map<int64_t, OffsetMap> pending_txn_offsets;  // by producer id, until its marker
};

void ApplyRecord(std::unordered_map<std::string, LoadedGroup>& groups, ByteView key,
                 std::optional<ByteView> value, const CoordinatorLog::RecordBatchOf& batch,
                 int64_t& skipped) {
  const int64_t txn_producer_id = batch.txn_producer_id;
  auto k = DecodeRecordKey(key);
  if (!k.ok()) {
    ++skipped;
    return;
  }
  if (k->kind == RecordKey::Kind::kOther) {
    auto c = DecodeConsumerGroupRecord(key, value);
    if (!c.ok()) {
      ++skipped;
    } else if (c->has_value()) {
      groups[(*c)->group_id].consumer.push_back(std::move(**c));
    }
    return;
  }
  if (k->kind == RecordKey::Kind::kOffsetCommit) {
    LoadedGroup& group = groups[k->group];
    auto& topic = txn_producer_id >= 0 ? group.pending_txn_offsets[txn_producer_id][k->offset.topic]
                                       : group.offsets[k->offset.topic];
    if (!value) {
      topic.erase(k->offset.partition);
      return;
    }
    auto v = DecodeOffsetCommitValue(*value);
    if (!v.ok()) {
      ++skipped;
      return;
    }
    topic[k->offset.partition] = {v->offset,           v->leader_epoch,     v->metadata,
                                  v->commit_timestamp, v->expire_timestamp, batch.last_offset};
  } else if (k->kind == RecordKey::Kind::kGroupMetadata) {
    if (!value) {
      groups[k->group].metadata.reset();
      return;
    }
    auto v = DecodeGroupMetadataValue(*value);
    if (!v.ok()) {
      ++skipped;
      return;
    }
    groups[k->group].metadata = std::move(*v);
  }
}

// A transaction's marker read back: its pending offsets join the committed
// ones, or go.
void EndLoadedTransaction(std::unordered_map<std::string, LoadedGroup>& groups, int64_t producer_id,
                          bool committed) {
  for (auto& [id, group] : groups) {
    auto it = group.pending_txn_offsets.find(producer_id);
    if (it == group.pending_txn_offsets.end()) continue;
    if (committed) {
      for (auto& [topic, parts] : it->second) {
        for (auto& [partition, offset] : parts) {
          KeepLaterCommit(group.offsets[topic], partition, std::move(offset));
        }
      }
    }
    group.pending_txn_offsets.erase(it);
  }
}

// Builds the in-memory group from its last metadata record and offsets, as
// Kafka's loader does: members -> Stable, no members -> Empty.
std::shared_ptr<ClassicGroup> BuildGroup(const std::string& id, LoadedGroup& loaded,
                                         int64_t now_mono, int64_t now_wall,
                                         const ConsumerGroupConfig& consumer) {
  auto g = std::make_shared<ClassicGroup>(id, now_wall);
  if (!loaded.consumer.empty()) {
    auto c = std::make_unique<ConsumerGroup>(id);
    for (const auto& r : loaded.consumer) {
      Status st = c->Replay(r);
      if (!st.ok()) Log()->warn("group {}: replay: {}", id, st.error().message);
    }
    // Every member gets a full session to come back to the new coordinator.
    for (const auto& [member_id, m] : c->members()) c->ArmTimers(member_id, now_mono, consumer);
    if (!c->IsGone()) g->consumer = std::move(c);
  }
  if (loaded.metadata) {
    GroupMetadataValue& v = *loaded.metadata;
    auto opt = [](const std::string& s) { return s.empty() ? std::nullopt : std::optional(s); };
    g->Restore(v.members.empty() ? GroupState::kEmpty : GroupState::kStable, v.generation,
               opt(v.protocol_type), v.protocol, v.leader, v.current_state_timestamp);
    for (auto& mv : v.members) {
      GroupMember m;
      m.member_id = mv.member_id;
      m.group_instance_id = mv.group_instance_id;
      m.client_id = mv.client_id;
      m.client_host = mv.client_host;
      m.rebalance_timeout_ms =
          mv.rebalance_timeout == -1 ? mv.session_timeout : mv.rebalance_timeout;
      m.session_timeout_ms = mv.session_timeout;
      m.protocol_type = v.protocol_type;
      m.protocols.push_back({v.protocol.value_or(""), std::move(mv.subscription)});
      m.assignment = std::move(mv.assignment);
      m.heartbeat_deadline_ms = now_mono + m.session_timeout_ms;
      g->Add(std::move(m), nullptr);
    }
  } else {
    g->Restore(GroupState::kEmpty, 0, std::nullopt, std::nullopt, std::nullopt, -1);
  }
  for (auto it = loaded.offsets.begin(); it != loaded.offsets.end();) {
    it = it->second.empty() ? loaded.offsets.erase(it) : std::next(it);
  }
  g->offsets = std::move(loaded.offsets);
  g->pending_txn_offsets = std::move(loaded.pending_txn_offsets);
  g->RecomputeSubscribedTopics();
  g->RefreshNextDeadline();
  return g;
}

}  // namespace

GroupCoordinator::GroupCoordinator(CoordinatorConfig config, std::unique_ptr<CoordinatorLog> log,
                                   Clock* clock)
    : config_(config),
      log_(std::move(log)),
      residency_(std::make_unique<std::atomic<Residency>[]>(size_t(log_->partitions()))),
      clock_(clock),
      rebalance_(config_, clock,
                 [this](const ClassicGroup& g, const std::vector<CoordinatorRecord>& records) {
                   return Persist(g, records);
                 }) {
  for (int32_t p = 0; p < log_->partitions(); ++p) residency_[size_t(p)] = Residency::kAbsent;
  next_expiry_ms_ = Now() + config_.retention_check_interval_ms;
}

GroupCoordinator::~GroupCoordinator() = default;

int32_t GroupCoordinator::PartitionFor(const std::string& group_id) const {
  return PartitionForKey(group_id, log_->partitions());
}

Status GroupCoordinator::Load() {
  for (int32_t p = 0; p < log_->partitions(); ++p) {
    if (log_->Hosts(p)) STRATA_RETURN_IF_ERROR(LoadPartition(p));
  }
  return Status::Ok();
}

Status GroupCoordinator::LoadPartition(int32_t p) {
  if (p < 0 || p >= log_->partitions()) {
    return MakeError(Errc::kInvalidArgument, fmt::format("no offsets partition {}", p));
  }
  std::lock_guard serial(residency_mu_);
  if (residency_[size_t(p)] == Residency::kLoaded) return Status::Ok();
  residency_[size_t(p)] = Residency::kLoading;
  const auto start = std::chrono::steady_clock::now();
  int64_t records = 0;
  int64_t skipped = 0;
  std::unordered_map<std::string, LoadedGroup> loaded;
  Status replayed = log_->ReplayWithTransactions(
      p,
      [&](ByteView key, std::optional<ByteView> value, const CoordinatorLog::RecordBatchOf& batch) {
        ++records;
        ApplyRecord(loaded, key, value, batch, skipped);
      },
      [&](int64_t producer_id, bool committed) {
        EndLoadedTransaction(loaded, producer_id, committed);
      });
  if (!replayed.ok()) {
    std::lock_guard lock(deferred_mu_);
    deferred_ends_.erase(p);  // the next load replays them
    residency_[size_t(p)] = Residency::kAbsent;
    return replayed;
  }
  size_t groups = 0;
  {
    std::lock_guard lock(map_mu_);
    for (auto& [id, l] : loaded) {
      bool has_offsets = false;
      for (const auto& [t, parts] : l.offsets) has_offsets |= !parts.empty();
      const bool classic_state = l.metadata || has_offsets || !l.pending_txn_offsets.empty();
      if (!classic_state && l.consumer.empty()) continue;
      auto g = BuildGroup(id, l, Now(), WallNow(), config_.consumer);
      if (!classic_state && !g->IsConsumerGroup()) continue;  // a consumer group deleted in the log
      groups_[id] = std::move(g);
      ++groups;
    }
  }
  std::vector<DeferredEnd> ends;
  {
    std::lock_guard lock(deferred_mu_);
    if (auto it = deferred_ends_.find(p); it != deferred_ends_.end()) {
      ends = std::move(it->second);
      deferred_ends_.erase(it);
    }
    residency_[size_t(p)] = Residency::kLoaded;
  }
  // Ends the replay may have missed; one it read already finds nothing pending.
  for (const DeferredEnd& end : ends) ApplyTransactionEnd(p, end.producer_id, end.committed);
  if (skipped > 0) Log()->warn("skipped {} unreadable records in {}-{}", skipped, kOffsetsTopic, p);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  if (records > 0) {
    Log()->info("loaded {} groups from {} records of {}-{} in {} ms", groups, records,
                kOffsetsTopic, p, ms);
  }
  return Status::Ok();
}

GroupCoordinator::LockedGroup GroupCoordinator::Acquire(const std::string& group_id, bool create,
                                                        bool* created) {
  for (;;) {
    std::shared_ptr<ClassicGroup> g;
    bool made = false;
    {
      std::lock_guard lock(map_mu_);
      auto it = groups_.find(group_id);
      if (it != groups_.end()) {
        g = it->second;
      } else if (create) {
        g = std::make_shared<ClassicGroup>(group_id, WallNow());
        groups_.emplace(group_id, g);
        made = true;
      } else {
        return {};
      }
    }
    LockedGroup locked(std::move(g));
    if (!locked->Is(GroupState::kDead)) {
      if (created) *created = made;
      return locked;
    }
    // Deleted between the lookup and the lock: it has left the table.
    if (!create) return {};
  }
}

void GroupCoordinator::Unlink(const std::shared_ptr<ClassicGroup>& group) {
  std::lock_guard lock(map_mu_);
  auto it = groups_.find(group->group_id());
  if (it != groups_.end() && it->second == group) groups_.erase(it);
}

std::vector<std::shared_ptr<ClassicGroup>> GroupCoordinator::Snapshot() const {
  std::lock_guard lock(map_mu_);
  std::vector<std::shared_ptr<ClassicGroup>> out;
  out.reserve(groups_.size());
  for (const auto& [id, g] : groups_) out.push_back(g);
  return out;
}

void GroupCoordinator::Tick() {
  int64_t now = Now();
  std::vector<std::shared_ptr<ClassicGroup>> due;
  {
    std::lock_guard lock(map_mu_);
    for (const auto& [id, g] : groups_) {
      if (g->next_deadline_ms.load(std::memory_order_relaxed) <= now) due.push_back(g);
    }
  }
  for (auto& g : due) {
    LockedGroup locked(g);
    if (locked->Is(GroupState::kDead)) continue;
    if (locked->IsConsumerGroup()) {
      RunConsumerTimers(*locked, now);
    } else {
      rebalance_.RunTimers(*locked, now);
    }
  }
  bool expire = false;
  {
    std::lock_guard lock(expiry_mu_);
    if (now >= next_expiry_ms_) {
      next_expiry_ms_ = now + config_.retention_check_interval_ms;
      expire = true;
    }
  }
  if (expire) ExpireOffsets();
}

void GroupCoordinator::JoinGroup(const RequestContext& ctx, const protocol::JoinGroupRequest& req,
                                 JoinCallback done) {
  if (req.group_id.empty()) return done(JoinRefused(ErrorCode::kInvalidGroupId, req.member_id));
  if (req.session_timeout_ms < config_.min_session_timeout_ms ||
      req.session_timeout_ms > config_.max_session_timeout_ms) {
    return done(JoinRefused(ErrorCode::kInvalidSessionTimeout, req.member_id));
  }
  bool unknown_member = req.member_id.empty();
  bool created = false;
  LockedGroup g = Acquire(req.group_id, /*create=*/unknown_member, &created);
  if (!g) return done(JoinRefused(ErrorCode::kUnknownMemberId, req.member_id));
  if (g->IsConsumerGroup()) {
    // The group speaks KIP-848's protocol: a classic member may only take
    // it over once it is empty (its consumer-group records are deleted).
    if (!g->consumer->members().empty()) {
      return done(JoinRefused(ErrorCode::kInconsistentGroupProtocol, req.member_id));
    }
    Status st = PersistConsumer(*g, g->consumer->DeleteRecords());
    if (!st.ok()) return done(JoinRefused(ErrorCode::kCoordinatorNotAvailable, req.member_id));
    g->consumer.reset();
  }
  if (created) {
    // As Kafka: a new group is committed to the log as an empty group first.
    Status st = Persist(*g, {ClassicRebalance::EmptyGroupRecord(*g)});
    if (!st.ok()) {
      Log()->warn("group {}: cannot write empty group metadata: {}", req.group_id,
                  st.error().message);
      g->TransitionTo(GroupState::kDead, WallNow());
      Unlink(g.shared());
      return done(JoinRefused(ErrorCode::kCoordinatorNotAvailable, req.member_id));
    }
  }
  rebalance_.Join(*g, ctx, req, done);
}

void GroupCoordinator::SyncGroup(const RequestContext&, const protocol::SyncGroupRequest& req,
                                 SyncCallback done) {
  if (req.group_id.empty()) return done(SyncRefused(ErrorCode::kInvalidGroupId));
  LockedGroup g = Acquire(req.group_id, false);
  if (!g || g->Is(GroupState::kEmpty)) return done(SyncRefused(ErrorCode::kUnknownMemberId));
  rebalance_.Sync(*g, req, std::move(done));
}

protocol::HeartbeatResponse GroupCoordinator::Heartbeat(const protocol::HeartbeatRequest& req) {
  protocol::HeartbeatResponse r;
  auto fail = [&](ErrorCode code) {
    r.error_code = Code(code);
    return r;
  };
  if (req.group_id.empty()) return fail(ErrorCode::kInvalidGroupId);
  LockedGroup g = Acquire(req.group_id, false);
  if (!g) return fail(ErrorCode::kUnknownMemberId);
  return rebalance_.Heartbeat(*g, req);
}

protocol::LeaveGroupResponse GroupCoordinator::LeaveGroup(
    const std::string& group_id, const std::vector<protocol::LeaveGroupRequest::Member>& members) {
  if (group_id.empty()) {
    protocol::LeaveGroupResponse resp;
    resp.error_code = Code(protocol::ErrorCode::kInvalidGroupId);
    return resp;
  }
  LockedGroup g = Acquire(group_id, false);
  return rebalance_.Leave(g ? &*g : nullptr, members);
}

Status GroupCoordinator::Persist(const ClassicGroup& g,
                                 const std::vector<CoordinatorRecord>& records) {
  STRATA_RETURN_IF_ERROR(PersistAt(g, records));
  return Status::Ok();
}

Result<Offset> GroupCoordinator::PersistAt(const ClassicGroup& g,
                                           const std::vector<CoordinatorRecord>& records) {
  return log_->Append(PartitionFor(g.group_id()), records);
}

}  // namespace strata::coordinator
