// TxnOffsetCommit and the end of the transactions it wrote into, following
// Kafka's OffsetMetadataManager: a transactional producer's offsets are
// written as a transactional batch of that producer to the group's
// __consumer_offsets partition and wait, pending, until the transaction's
// marker lands there; COMMIT makes them the group's committed offsets, ABORT
// drops them. Replay does the same with the batches and markers it reads.
#include "coordinator/group_coordinator.h"
#include "coordinator/group_records.h"
#include "coordinator/logger.h"

namespace strata::coordinator {

namespace {

using protocol::ErrorCode;
using protocol::TxnOffsetCommitRequest;
using protocol::TxnOffsetCommitResponse;

// KIP-447's member checks; unlike OffsetCommit's, a commit naming no member,
// generation or instance (a producer without the consumer's group metadata)
// is taken whatever the group's state.
ErrorCode ValidateTxnOffsetCommit(ClassicGroup& g, const TxnOffsetCommitRequest& req) {
  if (g.Is(GroupState::kDead)) return ErrorCode::kCoordinatorNotAvailable;
  if (req.generation_id < 0 && req.member_id.empty() && !req.group_instance_id) {
    return ErrorCode::kNone;
  }
  if (g.IsConsumerGroup()) {
    // A KIP-848 member commits at its current epoch (Kafka answers a stale
    // one ILLEGAL_GENERATION here).
    if (req.generation_id < 0 && g.consumer->members().empty()) return ErrorCode::kNone;
    const ConsumerGroupMember* m = g.consumer->member(req.member_id);
    if (m == nullptr) return ErrorCode::kUnknownMemberId;
    return req.generation_id == m->current.member_epoch ? ErrorCode::kNone
                                                        : ErrorCode::kIllegalGeneration;
  }
  if (req.generation_id < 0 && g.Is(GroupState::kEmpty)) return ErrorCode::kNone;
  ErrorCode err = g.ValidateMember(req.member_id, req.group_instance_id);
  if (err != ErrorCode::kNone) return err;
  if (req.generation_id != g.generation()) return ErrorCode::kIllegalGeneration;
  return ErrorCode::kNone;
}

TxnOffsetCommitResponse TxnCommitError(const TxnOffsetCommitRequest& req, ErrorCode code) {
  TxnOffsetCommitResponse resp;
  for (const auto& t : req.topics) {
    auto& out = resp.topics.emplace_back();
    out.name = t.name;
    for (const auto& p : t.partitions) out.partitions.push_back({p.partition_index, Code(code)});
  }
  return resp;
}

}  // namespace

TxnOffsetCommitResponse GroupCoordinator::CommitTxnOffsets(const TxnOffsetCommitRequest& req,
                                                           uint64_t verification_guard) {
  LockedGroup g = Acquire(req.group_id, false);
  if (!g) {
    if (req.generation_id >= 0) return TxnCommitError(req, ErrorCode::kIllegalGeneration);
    g = Acquire(req.group_id, true);  // a "simple" group that only stores offsets
  }
  const ErrorCode err = ValidateTxnOffsetCommit(*g, req);
  if (err != ErrorCode::kNone) return TxnCommitError(req, err);
  TxnOffsetCommitResponse resp;
  std::vector<CoordinatorRecord> records;
  OffsetMap pending;
  const int64_t now = WallNow();
  for (const auto& t : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.name = t.name;
    for (const auto& p : t.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      out.partition_index = p.partition_index;
      auto staged = StageOffsetCommit(req.group_id, t.name, p.partition_index, p.committed_offset,
                                      p.committed_leader_epoch, p.committed_metadata, now, records);
      if (!staged) {
        out.error_code = Code(ErrorCode::kOffsetMetadataTooLarge);
        continue;
      }
      pending[t.name][p.partition_index] = std::move(*staged);
    }
  }
  Result<Offset> st = log_->Append(
      PartitionFor(req.group_id), records,
      CoordinatorLog::TxnProducer{req.producer_id, req.producer_epoch, verification_guard});
  if (!st.ok()) {
    Log()->warn("group {}: transactional offset commit of producer {} not stored: {}", req.group_id,
                req.producer_id, st.error().message);
    // A stale producer epoch is the producer's error; a lost leadership
    // sends it to the new coordinator.
    ErrorCode code = ErrorCode::kCoordinatorNotAvailable;
    if (st.error().code == Errc::kInvalidProducerEpoch) code = ErrorCode::kInvalidProducerEpoch;
    if (st.error().code == Errc::kInvalidTxnState) code = ErrorCode::kInvalidTxnState;
    if (st.error().code == Errc::kFenced) code = ErrorCode::kNotCoordinator;
    for (auto& t : resp.topics) {
      for (auto& p : t.partitions) {
        if (p.error_code == 0) p.error_code = Code(code);
      }
    }
    return resp;
  }
  OffsetMap& held = g->pending_txn_offsets[req.producer_id];
  for (auto& [topic, parts] : pending) {
    for (auto& [partition, offset] : parts) {
      offset.record_offset = *st;
      held[topic][partition] = std::move(offset);
    }
  }
  return resp;
}

void GroupCoordinator::CompleteTransaction(int32_t p, int64_t producer_id, bool committed) {
  if (p < 0 || p >= log_->partitions()) return;
  {
    std::lock_guard lock(deferred_mu_);
    if (residency_[size_t(p)] == Residency::kLoading) {
      deferred_ends_[p].push_back({producer_id, committed});
      return;
    }
  }
  ApplyTransactionEnd(p, producer_id, committed);
}

void GroupCoordinator::ApplyTransactionEnd(int32_t p, int64_t producer_id, bool committed) {
  size_t applied = 0;
  for (auto& shared : Snapshot()) {
    if (PartitionFor(shared->group_id()) != p) continue;
    LockedGroup g(shared);
    auto it = g->pending_txn_offsets.find(producer_id);
    if (it == g->pending_txn_offsets.end()) continue;
    if (committed) {
      for (auto& [topic, parts] : it->second) {
        for (auto& [partition, offset] : parts) {
          applied += KeepLaterCommit(g->offsets[topic], partition, std::move(offset)) ? 1 : 0;
        }
      }
    }
    g->pending_txn_offsets.erase(it);
  }
  if (applied > 0) {
    Log()->debug("{}-{}: producer {} committed {} transactional offsets", kOffsetsTopic, p,
                 producer_id, applied);
  }
}

}  // namespace strata::coordinator
