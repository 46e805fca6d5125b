// OffsetCommit, OffsetFetch, OffsetDelete and offset expiry, following Kafka's
// OffsetMetadataManager and ClassicGroup.validateOffsetCommit.
#include "base/log.h"
#include "coordinator/group_coordinator.h"
#include "coordinator/group_records.h"
#include "coordinator/logger.h"

namespace strata::coordinator {

namespace {

using protocol::ErrorCode;

// How a failed append is reported for commits (Kafka's mapping).
ErrorCode AppendErrorCode(const Error& e) {
  return e.code == Errc::kTooLarge ? ErrorCode::kInvalidCommitOffsetSize
                                   : ErrorCode::kCoordinatorNotAvailable;
}

// A consumer group's commit: from a member at its current epoch (KIP-848
// allows no other), or from an admin tool while the group is empty.
ErrorCode ValidateConsumerGroupCommit(const ConsumerGroup& c,
                                      const protocol::OffsetCommitRequest& req,
                                      int16_t api_version) {
  if (req.generation_id < 0 && c.members().empty()) return ErrorCode::kNone;
  const ConsumerGroupMember* m = c.member(req.member_id);
  if (m == nullptr) return ErrorCode::kUnknownMemberId;
  if (req.generation_id != m->current.member_epoch) {
    return api_version >= 9 ? ErrorCode::kStaleMemberEpoch : ErrorCode::kIllegalGeneration;
  }
  return ErrorCode::kNone;
}

ErrorCode ValidateOffsetCommit(ClassicGroup& g, const protocol::OffsetCommitRequest& req,
                               int16_t api_version) {
  if (g.IsConsumerGroup()) return ValidateConsumerGroupCommit(*g.consumer, req, api_version);
  if (req.generation_id < 0 && g.Is(GroupState::kEmpty))
    return ErrorCode::kNone;  // admin / simple consumer
  if (req.generation_id >= 0 || !req.member_id.empty() || req.group_instance_id) {
    ErrorCode err = g.ValidateMember(req.member_id, req.group_instance_id);
    if (err != ErrorCode::kNone) return err;
    if (req.generation_id != g.generation()) return ErrorCode::kIllegalGeneration;
  } else if (!g.Is(GroupState::kEmpty)) {
    return ErrorCode::kUnknownMemberId;
  }
  // The member knows the new generation but the assignment is not settled.
  if (g.Is(GroupState::kCompletingRebalance)) return ErrorCode::kRebalanceInProgress;
  return ErrorCode::kNone;
}

protocol::OffsetCommitResponse CommitError(const protocol::OffsetCommitRequest& req,
                                           ErrorCode code) {
  protocol::OffsetCommitResponse resp;
  for (const auto& t : req.topics) {
    auto& out = resp.topics.emplace_back();
    out.name = t.name;
    for (const auto& p : t.partitions) out.partitions.push_back({p.partition_index, Code(code)});
  }
  return resp;
}

}  // namespace

protocol::OffsetCommitResponse GroupCoordinator::CommitOffsets(
    const protocol::OffsetCommitRequest& req, int16_t api_version) {
  LockedGroup g = Acquire(req.group_id, false);
  if (!g) {
    if (req.generation_id >= 0) {
      return CommitError(
          req, api_version >= 9 ? ErrorCode::kGroupIdNotFound : ErrorCode::kIllegalGeneration);
    }
    g = Acquire(req.group_id, true);  // a "simple" group that only stores offsets
  }
  ErrorCode err = ValidateOffsetCommit(*g, req, api_version);
  if (err != ErrorCode::kNone) return CommitError(req, err);
  // In the classic protocol a commit also keeps the member's session alive.
  if (g->Is(GroupState::kStable) || g->Is(GroupState::kPreparingRebalance)) {
    if (GroupMember* m = g->member(req.member_id))
      rebalance_.RescheduleHeartbeat(*m, m->session_timeout_ms);
  }
  protocol::OffsetCommitResponse resp;
  std::vector<CoordinatorRecord> records;
  struct Pending {
    size_t topic;      // index in resp.topics / req.topics
    size_t partition;  // index in that topic's partitions
    CommittedOffset offset;
  };
  std::vector<Pending> pending;
  int64_t now = WallNow();
  for (size_t ti = 0; ti < req.topics.size(); ++ti) {
    const auto& t = req.topics[ti];
    auto& out_topic = resp.topics.emplace_back();
    out_topic.name = t.name;
    for (size_t pi = 0; pi < t.partitions.size(); ++pi) {
      const auto& p = t.partitions[pi];
      auto& out = out_topic.partitions.emplace_back();
      out.partition_index = p.partition_index;
      auto staged = StageOffsetCommit(req.group_id, t.name, p.partition_index, p.committed_offset,
                                      p.committed_leader_epoch, p.committed_metadata, now, records);
      if (!staged) {
        out.error_code = Code(ErrorCode::kOffsetMetadataTooLarge);
        continue;
      }
      pending.push_back({ti, pi, std::move(*staged)});
    }
  }
  Result<Offset> st = PersistAt(*g, records);
  for (auto& [ti, pi, offset] : pending) {
    if (st.ok()) {
      offset.record_offset = *st;
      g->offsets[req.topics[ti].name][req.topics[ti].partitions[pi].partition_index] =
          std::move(offset);
    } else {
      resp.topics[ti].partitions[pi].error_code = Code(AppendErrorCode(st.error()));
    }
  }
  if (!st.ok())
    Log()->warn("group {}: offset commit not stored: {}", req.group_id, st.error().message);
  return resp;
}

std::optional<CommittedOffset> GroupCoordinator::StageOffsetCommit(
    const std::string& group_id, const std::string& topic, int32_t partition, int64_t offset,
    int32_t leader_epoch, const std::optional<std::string>& metadata, int64_t now,
    std::vector<CoordinatorRecord>& records) const {
  std::string md = metadata.value_or("");
  if (md.size() > static_cast<size_t>(config_.max_metadata_bytes)) return std::nullopt;
  records.push_back({EncodeOffsetCommitKey({group_id, topic, partition}),
                     EncodeOffsetCommitValue({offset, leader_epoch, md, now, -1})});
  return CommittedOffset{offset, leader_epoch, std::move(md), now, -1};
}

protocol::OffsetFetchResponse::Group GroupCoordinator::FetchOffsets(
    const std::string& group_id,
    const std::optional<std::vector<protocol::OffsetFetchRequest::Topic>>& topics,
    bool require_stable) {
  protocol::OffsetFetchResponse::Group out;
  out.group_id = group_id;
  LockedGroup g = Acquire(group_id, false);
  auto fill = [](protocol::OffsetFetchResponse::Partition& p, const CommittedOffset* c) {
    p.committed_offset = c ? c->offset : -1;
    p.committed_leader_epoch = c ? c->leader_epoch : -1;
    p.metadata = c ? c->metadata : std::string();
  };
  if (topics) {
    for (const auto& t : *topics) {
      auto& ot = out.topics.emplace_back();
      ot.name = t.name;
      const std::map<int32_t, CommittedOffset>* parts = nullptr;
      if (g) {
        auto it = g->offsets.find(t.name);
        if (it != g->offsets.end()) parts = &it->second;
      }
      for (int32_t index : t.partition_indexes) {
        auto& op = ot.partitions.emplace_back();
        op.partition_index = index;
        if (require_stable && g && g->HasPendingTxnOffset(t.name, index)) {
          fill(op, nullptr);
          op.error_code = Code(ErrorCode::kUnstableOffsetCommit);
          continue;
        }
        const CommittedOffset* c = nullptr;
        if (parts) {
          auto pit = parts->find(index);
          if (pit != parts->end()) c = &pit->second;
        }
        fill(op, c);
      }
    }
    return out;
  }
  if (!g) return out;
  for (const auto& [topic, parts] : g->offsets) {
    if (parts.empty()) continue;
    auto& ot = out.topics.emplace_back();
    ot.name = topic;
    for (const auto& [index, c] : parts) {
      auto& op = ot.partitions.emplace_back();
      op.partition_index = index;
      const bool unstable = require_stable && g->HasPendingTxnOffset(topic, index);
      fill(op, unstable ? nullptr : &c);
      if (unstable) op.error_code = Code(ErrorCode::kUnstableOffsetCommit);
    }
  }
  return out;
}

protocol::OffsetDeleteResponse GroupCoordinator::DeleteOffsets(
    const protocol::OffsetDeleteRequest& req) {
  protocol::OffsetDeleteResponse resp;
  LockedGroup g = Acquire(req.group_id, false);
  if (!g) {
    resp.error_code = Code(ErrorCode::kGroupIdNotFound);
    return resp;
  }
  bool active = !g->Is(GroupState::kEmpty);
  if (active && !g->UsesConsumerProtocol() && !g->IsConsumerGroup()) {
    resp.error_code = Code(ErrorCode::kNonEmptyGroup);
    return resp;
  }
  std::vector<CoordinatorRecord> records;
  std::vector<std::pair<std::string, int32_t>> deleted;
  for (const auto& t : req.topics) {
    auto& ot = resp.topics.emplace_back();
    ot.name = t.name;
    bool subscribed = g->IsSubscribedToTopic(t.name);
    for (const auto& p : t.partitions) {
      auto& op = ot.partitions.emplace_back();
      op.partition_index = p.partition_index;
      if (subscribed) {
        op.error_code = Code(ErrorCode::kGroupSubscribedToTopic);
        continue;
      }
      auto it = g->offsets.find(t.name);
      if (it != g->offsets.end() && it->second.count(p.partition_index)) {
        records.push_back(
            {EncodeOffsetCommitKey({req.group_id, t.name, p.partition_index}), std::nullopt});
        deleted.emplace_back(t.name, p.partition_index);
      }
    }
  }
  Status st = Persist(*g, records);
  if (!st.ok()) {
    Log()->warn("group {}: offset deletion not stored: {}", req.group_id, st.error().message);
    resp.topics.clear();
    resp.error_code = Code(ErrorCode::kCoordinatorNotAvailable);
    return resp;
  }
  for (const auto& [topic, partition] : deleted) {
    auto it = g->offsets.find(topic);
    it->second.erase(partition);
    if (it->second.empty()) g->offsets.erase(it);
  }
  return resp;
}

void GroupCoordinator::ExpireOffsets() {
  int64_t now = WallNow();
  int expired_groups = 0;
  for (auto& shared : Snapshot()) {
    LockedGroup g(shared);
    if (g->Is(GroupState::kDead)) continue;
    if (!ExpireGroupOffsets(*g, now) || !g->Is(GroupState::kEmpty)) continue;
    if (g->IsConsumerGroup() && !g->consumer->members().empty()) continue;
    // Empty and without offsets: the group itself goes (Kafka's cleanup).
    std::vector<CoordinatorRecord> records;
    if (g->IsConsumerGroup()) {
      for (const auto& r : g->consumer->DeleteRecords())
        records.push_back(EncodeConsumerGroupRecord(r));
    }
    records.push_back({EncodeGroupMetadataKey(g->group_id()), std::nullopt});
    Status st = Persist(*g, records);
    if (!st.ok()) continue;
    g->TransitionTo(GroupState::kDead, now);
    Unlink(g.shared());
    ++expired_groups;
  }
  if (expired_groups > 0) Log()->info("removed {} empty groups without offsets", expired_groups);
}

bool GroupCoordinator::ExpireGroupOffsets(ClassicGroup& g, int64_t now_ms) {
  if (g.offsets.empty()) return true;
  // Which timestamp an offset's retention counts from (Kafka's
  // offsetExpirationCondition); nullopt = offsets of this group do not expire now.
  std::optional<bool> from_state_time;
  if (g.IsConsumerGroup()) {
    // Kept while the group has members; counted from each commit after.
    if (g.consumer->members().empty()) from_state_time = false;
  } else if (!g.protocol_type()) {
    from_state_time = false;  // simple group: from each commit
  } else if (g.Is(GroupState::kEmpty)) {
    from_state_time = g.state_timestamp_ms() >= 0;
  } else if (g.UsesConsumerProtocol() && g.subscribed_topics() && g.Is(GroupState::kStable)) {
    from_state_time = false;  // only unsubscribed topics, from each commit
  }
  if (!from_state_time) return false;
  bool all_expired = true;
  std::vector<CoordinatorRecord> records;
  std::vector<std::pair<std::string, int32_t>> expired;
  for (const auto& [topic, parts] : g.offsets) {
    if (g.IsSubscribedToTopic(topic)) {
      all_expired = false;
      continue;
    }
    for (const auto& [partition, c] : parts) {
      int64_t base = *from_state_time ? g.state_timestamp_ms() : c.commit_timestamp_ms;
      bool gone = c.expire_timestamp_ms >= 0 ? now_ms >= c.expire_timestamp_ms
                                             : base + config_.offsets_retention_ms <= now_ms;
      if (!gone) {
        all_expired = false;
        continue;
      }
      records.push_back({EncodeOffsetCommitKey({g.group_id(), topic, partition}), std::nullopt});
      expired.emplace_back(topic, partition);
    }
  }
  if (records.empty()) return all_expired;
  Status st = Persist(g, records);
  if (!st.ok()) {
    Log()->warn("group {}: offset expiry not stored: {}", g.group_id(), st.error().message);
    return false;
  }
  for (const auto& [topic, partition] : expired) {
    auto it = g.offsets.find(topic);
    it->second.erase(partition);
    if (it->second.empty()) g.offsets.erase(it);
  }
  Log()->info("group {}: expired {} committed offsets", g.group_id(), expired.size());
  return all_expired;
}

}  // namespace strata::coordinator
