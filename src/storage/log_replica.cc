// The follower's side of the log: batches appended as the leader wrote
// them, truncation of a tail the leader does not have (KIP-101), and a
// fresh start above a leader's log start.
#include <fmt/format.h>

#include "base/log.h"
#include "storage/checkpoints.h"
#include "storage/log_impl.h"
#include "storage/recovery.h"

namespace strata::storage {

using protocol::BatchHeader;

Result<AppendResult> LogImpl::AppendAsFollower(MutableByteView batches,
                                               const std::vector<BatchInfo>& infos) {
  std::lock_guard lock(mu_);
  if (closed_) return MakeError(Errc::kShuttingDown, fmt::format("{} is closed", label_));
  if (infos.empty()) return MakeError(Errc::kInvalidArgument, "no batches to append");
  // A fetch may bring more than a segment holds: append in runs that fit
  // one, rolling between them.
  AppendResult result;
  size_t pos = 0;
  for (size_t i = 0; i < infos.size();) {
    std::vector<BatchInfo> run;
    int64_t run_bytes = 0;
    while (i < infos.size() &&
           (run.empty() || run_bytes + infos[i].size <= segment_bytes_limit())) {
      run_bytes += infos[i].size;
      run.push_back(infos[i++]);
    }
    if (pos + size_t(run_bytes) > batches.size()) {
      return MakeError(Errc::kInvalidArgument, "batch infos do not cover the buffer");
    }
    STRATA_ASSIGN_OR_RETURN(
        AppendResult r, AppendRunAsFollowerLocked(batches.subspan(pos, size_t(run_bytes)), run));
    if (result.base_offset < 0_o) result.base_offset = r.base_offset;
    result.last_offset = r.last_offset;
    result.log_start_offset = r.log_start_offset;
    pos += size_t(run_bytes);
  }
  if (pos != batches.size())
    return MakeError(Errc::kInvalidArgument, "batch infos do not cover the buffer");
  return result;
}

Result<AppendResult> LogImpl::AppendRunAsFollowerLocked(MutableByteView batches,
                                                        const std::vector<BatchInfo>& infos) {
  const int64_t now = clock_->NowMs();
  std::vector<MutableByteView> views;
  std::vector<BatchHeader> headers;
  STRATA_RETURN_IF_ERROR(SplitBatches(batches, infos, &views, &headers));
  // The leader's offsets are kept. Compaction on the leader may have left
  // gaps between batches, never an overlap or a step back.
  Offset next = leo_.load();
  for (const BatchHeader& h : headers) {
    if (h.base_offset < next) {
      return MakeError(Errc::kInvalidArgument,
                       fmt::format("{}: replicated batch at {} is below the log end {}", label_,
                                   h.base_offset, next));
    }
    next = h.last_offset() + 1;
  }
  // Markers are read before anything is written: an unreadable one is
  // refused whole, as a corrupt batch.
  std::vector<ProducerBatch> producer_batches;
  for (size_t i = 0; i < headers.size(); ++i) {
    if (!headers[i].idempotent()) continue;
    STRATA_ASSIGN_OR_RETURN(ProducerBatch pb, ProducerBatchOf(headers[i], ByteView(views[i])));
    producer_batches.push_back(std::move(pb));
  }
  const Offset first = headers.front().base_offset;
  if (ShouldRoll(int64_t(batches.size()), next - 1, now)) STRATA_RETURN_IF_ERROR(RollLocked());
  for (const BatchHeader& h : headers) {
    if (const LeaderEpoch epoch(h.partition_leader_epoch); epoch > epochs_.latest_epoch()) {
      STRATA_RETURN_IF_ERROR(epochs_.Assign(epoch, h.base_offset));
    }
  }

  Segment& seg = active();
  const uint64_t size_before = seg.size();
  Status written = seg.Append(batches, headers, config_.index_interval_bytes);
  if (!written.ok() && seg.size() == size_before) return written.take_error();
  if (size_before == 0) seg.set_first_append_ms(now);
  std::vector<CompletedTxn> completed;
  for (const ProducerBatch& pb : producer_batches) {
    for (CompletedTxn& txn : producers_.Replay(pb)) completed.push_back(txn);
  }
  leo_.store(next);
  Status indexed = IndexAbortedLocked(seg, completed);
  if (written.ok()) written = std::move(indexed);
  UpdateLastStableOffsetLocked();
  if (!written.ok()) {
    io_failed_ = true;
    log::Get("storage")->error("{}: index write failed after replicated append at {}: {}", label_,
                               first, written.error().message);
    return written.take_error();
  }
  AppendResult result;
  result.base_offset = first;
  result.last_offset = next - 1;
  result.log_start_offset = log_start_.load();
  STRATA_RETURN_IF_ERROR(MaybeFlushLocked(next - first, now));
  return result;
}

Status LogImpl::TruncateTo(Offset offset) {
  std::lock_guard lock(mu_);
  if (closed_) return MakeError(Errc::kShuttingDown, fmt::format("{} is closed", label_));
  const Offset old_end = leo_.load();
  if (offset >= old_end) return Status::Ok();
  if (offset < log_start_.load()) {
    return MakeError(Errc::kOutOfRange, fmt::format("{}: truncation to {} below the log start {}",
                                                    label_, offset, log_start_.load()));
  }
  // Whole segments at or above the offset go (the first one is kept, empty,
  // when the offset is its base: a log always has an active segment).
  while (segments_.size() > 1 && segments_.rbegin()->first >= offset) {
    auto last = std::prev(segments_.end());
    STRATA_RETURN_IF_ERROR(last->second->DeleteFiles());
    segments_.erase(last);
  }
  Segment& seg = active();
  // Cut at the first batch that reaches the offset: the log ends on a batch
  // boundary, as the leader's does.
  STRATA_ASSIGN_OR_RETURN(auto found, seg.FindBatch(offset, seg.IndexPosition(offset), seg.size()));
  if (found) {
    STRATA_RETURN_IF_ERROR(seg.TruncateLog(found->first));
    STRATA_RETURN_IF_ERROR(seg.ResetIndexes());
    STRATA_ASSIGN_OR_RETURN(SegmentRecovery r,
                            RecoverSegment(seg, seg.base_offset(), config_.index_interval_bytes,
                                           label_, [](const BatchHeader&) {}));
    (void)r;
  }
  STRATA_RETURN_IF_ERROR(seg.Flush());
  STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
  const Offset end = std::max(seg.next_offset(), seg.base_offset());
  leo_.store(end);
  STRATA_RETURN_IF_ERROR(epochs_.TruncateFromEnd(end));
  if (cleaner_checkpoint_.load() > end) cleaner_checkpoint_.store(end);
  high_watermark_ = std::min(high_watermark_, end);
  producers_.Clear();
  STRATA_RETURN_IF_ERROR(LoadProducerState());
  log::Get("storage")->info("{}: truncated from {} to {} ({})", label_, old_end, end,
                            producer_load_note_);
  return Status::Ok();
}

Status LogImpl::TruncateFullyAndStartAt(Offset offset, LeaderEpoch leader_epoch) {
  std::lock_guard lock(mu_);
  if (closed_) return MakeError(Errc::kShuttingDown, fmt::format("{} is closed", label_));
  const Offset old_start = log_start_.load();
  const Offset old_end = leo_.load();
  if (old_start == old_end && offset < old_end) return RestartEmptyLowerLocked(offset);
  if (offset <= old_end) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("{}: a full truncation starts above the log end {}, not at {}",
                                 label_, old_end, offset));
  }
  // The new segment first, then the log start, then the old segments: a
  // crash in between leaves a log with a gap (as compaction does), never
  // one without its records or its start.
  Segment& old = active();
  STRATA_RETURN_IF_ERROR(old.OnBecomeInactive());
  STRATA_RETURN_IF_ERROR(old.Flush());
  STRATA_ASSIGN_OR_RETURN(auto seg,
                          Segment::Create(dir_, offset, config_.segment_index_bytes, {}, env_));
  segments_[offset] = std::move(seg);
  STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
  leo_.store(offset);
  STRATA_RETURN_IF_ERROR(epochs_.Clear());
  producers_.Clear();
  high_watermark_ = std::min(high_watermark_, offset);
  UpdateLastStableOffsetLocked();
  if (leader_epoch >= LeaderEpoch(0)) {
    STRATA_RETURN_IF_ERROR(epochs_.Assign(leader_epoch, offset));
    STRATA_RETURN_IF_ERROR(WriteOffsetFile(dir_, kProducerStateGapFile, offset.value(), env_));
    producer_state_gap_.store(offset);
  }
  STRATA_RETURN_IF_ERROR(MoveLogStartLocked(offset));
  STRATA_ASSIGN_OR_RETURN(int deleted, DeleteSegmentsBelowLocked(offset));
  if (cleaner_checkpoint_.load() < offset) cleaner_checkpoint_.store(offset);
  log::Get("storage")->info("{}: emptied ({} segments, offsets {}..{}) to start at {}", label_,
                            deleted, old_start, old_end, offset);
  return Status::Ok();
}

Status LogImpl::RestartEmptyLowerLocked(Offset offset) {
  // The new segment first (below every old one: a failure leaves the log
  // as it was), then the old ones, which hold no records. A crash before
  // the log start is written reloads at the old start (the load empties a
  // log whose segments start below it).
  const Offset old_start = log_start_.load();
  STRATA_ASSIGN_OR_RETURN(auto seg,
                          Segment::Create(dir_, offset, config_.segment_index_bytes, {}, env_));
  segments_[offset] = std::move(seg);
  while (segments_.size() > 1) {
    auto old = std::next(segments_.begin());
    log::Get("storage")->info("{}: deleting empty segment {}: the log starts lower", label_,
                              old->first);
    STRATA_RETURN_IF_ERROR(old->second->DeleteFiles());
    segments_.erase(old);
  }
  STRATA_RETURN_IF_ERROR(WriteLogStartOffset(dir_, offset.value(), env_));
  STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
  log_start_.store(offset);
  leo_.store(offset);
  STRATA_RETURN_IF_ERROR(epochs_.Clear());
  producers_.Clear();
  high_watermark_ = std::min(high_watermark_, offset);
  UpdateLastStableOffsetLocked();
  if (cleaner_checkpoint_.load() > offset) cleaner_checkpoint_.store(offset);
  log::Get("storage")->info("{}: empty at {}, started again at {}", label_, old_start, offset);
  return Status::Ok();
}

Status LogImpl::MergeProducerSnapshot(ByteView snapshot, Offset snapshot_offset) {
  std::lock_guard lock(mu_);
  if (closed_) return MakeError(Errc::kShuttingDown, fmt::format("{} is closed", label_));
  const Offset gap = producer_state_gap_.load();
  if (gap < 0_o || snapshot_offset < gap || snapshot_offset > leo_.load()) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("{}: a producer snapshot at {} does not close the gap at {} "
                                 "(log end {})",
                                 label_, snapshot_offset, gap, leo_.load()));
  }
  ProducerStateManager older;
  STRATA_RETURN_IF_ERROR(older.DecodeSnapshot(snapshot));
  size_t taken = producers_.MergeOlder(older);
  UpdateLastStableOffsetLocked();  // a transaction open in it is open here
  // Durable before the gap goes: a restart loads this snapshot.
  STRATA_RETURN_IF_ERROR(WriteProducerSnapshotLocked(leo_.load()));
  STRATA_RETURN_IF_ERROR(env_->RemoveFile(dir_ / kProducerStateGapFile));
  STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
  producer_state_gap_.store(kNoOffset);
  log::Get("storage")->info(
      "{}: producer state below {} restored from a snapshot at {} ({} producers taken)", label_,
      gap, snapshot_offset, taken);
  return Status::Ok();
}

}  // namespace strata::storage
