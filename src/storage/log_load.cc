// LogImpl loading (Log::Open): files, segments, recovery, producer state.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "base/log.h"
#include "storage/checkpoints.h"
#include "storage/cleaner_checkpoint.h"
#include "storage/log_impl.h"
#include "storage/recovery.h"

namespace strata::storage {

namespace fs = std::filesystem;
using protocol::BatchHeader;

Result<std::unique_ptr<LogImpl>> LogImpl::Load(const fs::path& dir, const LogConfig& config,
                                               Clock* clock, Env* env) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return MakeError(Errc::kIoError, fmt::format("mkdir {}: {}", dir.string(), ec.message()));
  std::unique_ptr<LogImpl> log(new LogImpl(dir, config, clock, env));
  STRATA_RETURN_IF_ERROR(log->LoadLocked());
  return log;
}

Status LogImpl::LoadLocked() {
  std::lock_guard lock(mu_);
  auto logger = log::Get("storage");
  const bool clean = HasCleanShutdownMarker(dir_);
  STRATA_RETURN_IF_ERROR(CompleteInterruptedSwaps());
  STRATA_RETURN_IF_ERROR(RemoveStrayFiles());

  auto epochs = LeaderEpochCache::Load(dir_, env_);
  if (!epochs.ok()) {
    if (epochs.error().code != Errc::kCorrupt) return epochs.take_error();
    // The cache only speeds up OffsetsForLeaderEpoch; start over from the log.
    logger->warn("{}: ignoring leader-epoch-checkpoint: {}", label_, epochs.error().message);
    STRATA_RETURN_IF_ERROR(env_->RemoveFile(dir_ / kLeaderEpochCheckpoint));
    epochs = LeaderEpochCache::Load(dir_, env_);
    if (!epochs.ok()) return epochs.take_error();
  }
  epochs_ = std::move(*epochs);

  auto start = ReadLogStartOffset(dir_, env_);
  if (!start.ok()) {
    if (start.error().code != Errc::kCorrupt) return start.take_error();
    logger->warn("{}: ignoring {}", label_, start.error().message);
  }
  log_start_.store(start.ok() && start->has_value() ? Offset(**start) : Offset(0));
  auto gap = ReadOffsetFile(dir_, kProducerStateGapFile, env_);
  if (!gap.ok()) return gap.take_error();
  producer_state_gap_.store(gap->has_value() ? Offset(**gap) : kNoOffset);
  LoadCleanerCheckpoint();

  STRATA_RETURN_IF_ERROR(OpenSegments());
  STRATA_RETURN_IF_ERROR(RecoverSegments(clean));
  STRATA_RETURN_IF_ERROR(FixLogStartAfterLoad());
  STRATA_RETURN_IF_ERROR(epochs_.TruncateFromEnd(leo_.load()));
  STRATA_RETURN_IF_ERROR(epochs_.TruncateFromStart(log_start_.load()));
  STRATA_RETURN_IF_ERROR(LoadProducerState());

  // segment.ms for the active segment counts from its first batch's
  // timestamp when it has one (Kafka's choice), else from now.
  const int64_t now = clock_->NowMs();
  Segment& seg = active();
  if (seg.size() > 0) {
    STRATA_ASSIGN_OR_RETURN(auto first, seg.HeaderAt(0, seg.size()));
    seg.set_first_append_ms(first && first->max_timestamp >= 0 ? first->max_timestamp : now);
  }
  last_flush_ms_ = now;
  STRATA_RETURN_IF_ERROR(RemoveCleanShutdownMarker(dir_, env_));
  logger->info("{}: opened log [{}, {}) in {} segments ({}); {}", label_, log_start_.load(),
               leo_.load(), segments_.size(),
               fresh_ ? "new" : (clean ? "clean shutdown" : "recovered"), producer_load_note_);
  return Status::Ok();
}

void LogImpl::LoadCleanerCheckpoint() {
  auto checkpoint = ReadCleanerCheckpoint(dir_, env_);
  if (!checkpoint.ok()) {
    // Only costs a full re-clean.
    log::Get("storage")->warn("{}: ignoring cleaner checkpoint: {}", label_,
                              checkpoint.error().message);
    return;
  }
  cleaner_checkpoint_.store(checkpoint->has_value() ? Offset(**checkpoint) : kNoOffset);
}

// Finishes or rolls back a compaction swap cut short by a crash. Files named
// .cleaned (a cleaned segment not yet committed) and .deleted (segments
// already replaced) are removed. A <base>.log.swap is committed: it replaces
// every live segment whose base lies in [base, its next offset), which are
// exactly the segments it was cleaned from (a cleaned segment always ends
// where its group did), and then takes the live names. Index .swap files
// without their .log.swap are strays from an unfinished rename.
Status LogImpl::CompleteInterruptedSwaps() {
  std::error_code ec;
  std::vector<Offset> swaps;
  std::vector<fs::path> doomed;
  for (const auto& ent : fs::directory_iterator(dir_, ec)) {
    std::string name = ent.path().filename().string();
    if (name.ends_with(kCleanedSuffix) || name.ends_with(kDeletedSuffix)) {
      doomed.push_back(ent.path());
    } else if (name.ends_with(kSwapSuffix)) {
      std::string live = name.substr(0, name.size() - kSwapSuffix.size());
      if (auto base = ParseOffsetFileName(live, kLogSuffix)) {
        swaps.push_back(Offset(*base));
      } else if (!fs::exists(dir_ / (live.substr(0, 20) + std::string(kLogSuffix) +
                                     std::string(kSwapSuffix)))) {
        doomed.push_back(ent.path());
      }
    }
  }
  if (ec) return MakeError(Errc::kIoError, fmt::format("list {}: {}", dir_.string(), ec.message()));
  for (const fs::path& path : doomed) STRATA_RETURN_IF_ERROR(env_->RemoveFile(path));
  std::sort(swaps.begin(), swaps.end());
  for (Offset base : swaps) STRATA_RETURN_IF_ERROR(CompleteSwap(base));
  if (!doomed.empty() || !swaps.empty()) STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
  return Status::Ok();
}

Status LogImpl::CompleteSwap(Offset base) {
  Offset end = base;
  {
    STRATA_ASSIGN_OR_RETURN(
        auto swap, Segment::Open(dir_, base, config_.segment_index_bytes, kSwapSuffix, env_));
    Status st = swap->CheckIndexes();
    if (st.ok()) st = swap->LoadTail();
    if (!st.ok()) {
      STRATA_ASSIGN_OR_RETURN(auto r, RecoverSegment(*swap, base, config_.index_interval_bytes,
                                                     dir_.string(), nullptr));
      (void)r;
    }
    end = swap->next_offset();
  }
  std::vector<Offset> replaced;
  std::error_code ec;
  for (const auto& ent : fs::directory_iterator(dir_, ec)) {
    auto seg_base = ParseOffsetFileName(ent.path().filename().string(), kLogSuffix);
    if (seg_base && Offset(*seg_base) >= base && Offset(*seg_base) < end) {
      replaced.push_back(Offset(*seg_base));
    }
  }
  if (ec) return MakeError(Errc::kIoError, fmt::format("list {}: {}", dir_.string(), ec.message()));
  for (Offset b : replaced) STRATA_RETURN_IF_ERROR(RemoveSegmentFiles(dir_, b, ""));
  // Index files of `base` may already be the cleaned ones (half-done final
  // rename) or old ones: drop them; the swap's own indexes (or a rebuild) win.
  // A .txnindex is never rebuilt: without a .txnindex.swap the live one is
  // the cleaned one already renamed (the old one went to .deleted with its
  // segment first), or the old one of a group with no aborts; kept.
  fs::path txn_swap = dir_ / OffsetFileName(base.value(), kTxnIndexSuffix);
  txn_swap += std::string(kSwapSuffix);
  const bool keep_txn_index = !fs::exists(txn_swap, ec);
  STRATA_RETURN_IF_ERROR(RemoveSegmentFiles(dir_, base, "", keep_txn_index));
  STRATA_RETURN_IF_ERROR(RenameSegmentFiles(dir_, base, kSwapSuffix, ""));
  log::Get("storage")->warn(
      "{}: completed an interrupted compaction swap: segment {} replaces {} segments below {}",
      label_, base, replaced.size(), end);
  return Status::Ok();
}

// Leftovers of interrupted atomic writes, and index files whose .log is gone.
Status LogImpl::RemoveStrayFiles() {
  std::error_code ec;
  for (const auto& ent : fs::directory_iterator(dir_, ec)) {
    std::string name = ent.path().filename().string();
    bool stray = name.ends_with(".tmp");
    for (std::string_view suffix : {kIndexSuffix, kTimeIndexSuffix, kTxnIndexSuffix}) {
      if (auto base = ParseOffsetFileName(name, suffix)) {
        stray = stray || !fs::exists(dir_ / OffsetFileName(*base, kLogSuffix));
      }
    }
    if (stray) STRATA_RETURN_IF_ERROR(env_->RemoveFile(ent.path()));
  }
  if (ec) return MakeError(Errc::kIoError, fmt::format("list {}: {}", dir_.string(), ec.message()));
  return Status::Ok();
}

Status LogImpl::OpenSegments() {
  std::error_code ec;
  for (const auto& ent : fs::directory_iterator(dir_, ec)) {
    auto base = ParseOffsetFileName(ent.path().filename().string(), kLogSuffix);
    if (!base) continue;
    STRATA_ASSIGN_OR_RETURN(
        auto seg, Segment::Open(dir_, Offset(*base), config_.segment_index_bytes, {}, env_));
    segments_[Offset(*base)] = std::move(seg);
  }
  if (ec) return MakeError(Errc::kIoError, fmt::format("list {}: {}", dir_.string(), ec.message()));
  fresh_ = segments_.empty();
  if (fresh_) {
    const Offset base = log_start_.load();
    STRATA_ASSIGN_OR_RETURN(auto seg,
                            Segment::Create(dir_, base, config_.segment_index_bytes, {}, env_));
    segments_[base] = std::move(seg);
    STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
  }
  return Status::Ok();
}

// Segments are trusted when their indexes pass the sanity checks and their
// tail (from the last index entry) is a clean, CRC-valid run of batches; the
// active segment is always rescanned after an unclean shutdown (rolled
// segments were fsynced at roll). A truncated segment drops every later one.
Status LogImpl::RecoverSegments(bool clean) {
  auto logger = log::Get("storage");
  Offset min_offset = segments_.begin()->first;
  Status epoch_status;
  auto on_batch = [&](const BatchHeader& h) {
    const LeaderEpoch epoch(h.partition_leader_epoch);
    if (epoch > epochs_.latest_epoch() && epoch_status.ok()) {
      epoch_status = epochs_.Assign(epoch, h.base_offset);
    }
  };
  for (auto it = segments_.begin(); it != segments_.end(); ++it) {
    Segment& seg = *it->second;
    const bool last = std::next(it) == segments_.end();
    bool recover = last && !clean;
    std::string why;
    if (!recover) {
      Status st = seg.CheckIndexes();
      if (st.ok()) st = seg.LoadTail();
      if (!st.ok()) {
        why = st.error().message;
        recover = true;
      }
    }
    if (!recover) {
      min_offset = seg.next_offset();
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(
        SegmentRecovery r,
        RecoverSegment(seg, min_offset, config_.index_interval_bytes, dir_.string(), on_batch));
    STRATA_RETURN_IF_ERROR(epoch_status);
    // A truncation was already logged (one line); otherwise say why we rescanned.
    if (r.truncated_bytes == 0 && !why.empty()) {
      logger->warn("{}: rebuilt indexes of segment {}: {}", label_, seg.base_offset(), why);
    }
    if (r.truncated_bytes > 0 && !last) {
      std::vector<Offset> dropped;
      for (auto later = std::next(it); later != segments_.end();) {
        dropped.push_back(later->first);
        STRATA_RETURN_IF_ERROR(later->second->DeleteFiles());
        later = segments_.erase(later);
      }
      logger->warn("{}: deleted {} segments after the truncation point (bases {})", label_,
                   dropped.size(), fmt::join(dropped, ","));
      STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
    }
    min_offset = seg.next_offset();
  }
  leo_.store(active().next_offset());
  return Status::Ok();
}

Status LogImpl::FixLogStartAfterLoad() {
  const Offset first_base = segments_.begin()->first;
  Offset start = log_start_.load();
  if (start > leo_.load()) {
    // The tail the log start pointed into was lost: start afresh there, as
    // Kafka does when the log start offset passes the log end.
    log::Get("storage")->warn("{}: log start {} is past the recovered end {}; emptying the log",
                              label_, start, leo_.load());
    while (!segments_.empty()) {
      STRATA_RETURN_IF_ERROR(segments_.begin()->second->DeleteFiles());
      segments_.erase(segments_.begin());
    }
    STRATA_ASSIGN_OR_RETURN(auto seg,
                            Segment::Create(dir_, start, config_.segment_index_bytes, {}, env_));
    segments_[start] = std::move(seg);
    leo_.store(start);
    STRATA_RETURN_IF_ERROR(ProducerStateManager::PruneSnapshots(dir_, start, start, 0, env_));
    return env_->SyncDir(dir_);
  }
  if (start < first_base) {
    log_start_.store(first_base);
    STRATA_RETURN_IF_ERROR(WriteLogStartOffset(dir_, first_base.value(), env_));
  }
  STRATA_ASSIGN_OR_RETURN(int deleted, DeleteSegmentsBelowLocked(log_start_.load()));
  (void)deleted;
  return Status::Ok();
}

// Newest snapshot at or below the log end, then a replay of the batches
// after it. The aborted-transaction indexes are derived from the same
// replay: entries from the snapshot's offset on are dropped and written
// again as the replay meets their markers. A damaged index has lost entries
// below the snapshot too: then the replay starts at the log start, and the
// snapshot only adds the producers it did not meet.
Status LogImpl::LoadProducerState() {
  const Offset leo = leo_.load();
  const Offset start = log_start_.load();
  STRATA_RETURN_IF_ERROR(ProducerStateManager::PruneSnapshots(
      dir_, 0_o, leo, std::numeric_limits<size_t>::max(), env_));
  STRATA_ASSIGN_OR_RETURN(auto snapshot, producers_.LoadNewestSnapshot(dir_, leo, env_));
  Offset from = snapshot ? std::max(*snapshot, start) : start;
  ProducerStateManager from_snapshot;
  const bool rebuild = std::any_of(segments_.begin(), segments_.end(),
                                   [](const auto& s) { return s.second->txn_index_damaged(); });
  if (rebuild) {
    log::Get("storage")->warn("{}: rebuilding the aborted-transaction indexes from {}", label_,
                              start);
    from_snapshot = std::move(producers_);
    producers_.Clear();
    from = start;
  }
  for (const auto& [base, seg] : segments_) {
    if (seg->next_offset() > from || seg->txn_index_damaged()) {
      STRATA_RETURN_IF_ERROR(seg->txn_index().TruncateTo(from));
    }
  }
  int64_t replayed = 0;
  Status failed = Status::Ok();
  for (const auto& [base, seg] : segments_) {
    if (seg->next_offset() <= from) continue;
    Segment& segment = *seg;
    auto replay = [&](const BatchHeader& h, uint64_t pos) {
      if (h.base_offset < from || !h.idempotent()) return true;
      Result<ProducerBatch> pb = ProducerBatch::FromHeader(h);
      if (h.control()) {
        auto bytes = segment.ReadBatch(pos, h);
        pb = bytes.ok() ? ProducerBatchOf(h, *bytes) : Result<ProducerBatch>(bytes.take_error());
      }
      if (!pb.ok()) {
        failed = pb.take_error();
        return false;
      }
      failed = IndexAbortedLocked(segment, producers_.Replay(*pb));
      ++replayed;
      return failed.ok();
    };
    STRATA_RETURN_IF_ERROR(seg->ForEachBatch(seg->IndexPosition(from), seg->size(), replay));
    STRATA_RETURN_IF_ERROR(failed);
  }
  if (rebuild) {
    producers_.MergeOlder(from_snapshot);
    for (const auto& [base, seg] : segments_) seg->MarkTxnIndexRebuilt();
  }
  // Durable before any later snapshot can make the replay skip them.
  for (const auto& [base, seg] : segments_) STRATA_RETURN_IF_ERROR(seg->txn_index().Flush());
  // Transactions the replay completed below the mark already known hold
  // nothing back (the mark may not rise again soon: a truncated follower).
  producers_.OnHighWatermark(high_watermark_);
  UpdateLastStableOffsetLocked();
  producer_load_note_ = fmt::format("{} producers from snapshot {} + {} batches", producers_.size(),
                                    snapshot.value_or(kNoOffset), replayed);
  return Status::Ok();
}

}  // namespace strata::storage
