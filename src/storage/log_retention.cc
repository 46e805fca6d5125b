// LogImpl retention: retention.ms / retention.bytes, segment.ms rolling of an
// idle active segment, DeleteRecords, and the log start offset bookkeeping.
#include <fmt/format.h>

#include "base/log.h"
#include "storage/checkpoints.h"
#include "storage/log_impl.h"

namespace strata::storage {

Status LogImpl::DeleteFirstSegmentLocked(const char* reason) {
  auto first = segments_.begin();
  log::Get("storage")->info("{}: deleting segment {} ({} bytes): {}", label_, first->first,
                            first->second->size(), reason);
  STRATA_RETURN_IF_ERROR(first->second->DeleteFiles());
  segments_.erase(first);
  return Status::Ok();
}

// Deletes non-active segments wholly below `offset` (the next segment starts
// at or before it).
Result<int> LogImpl::DeleteSegmentsBelowLocked(Offset offset) {
  int deleted = 0;
  while (segments_.size() > 1 && std::next(segments_.begin())->first <= offset) {
    STRATA_RETURN_IF_ERROR(DeleteFirstSegmentLocked("below the log start offset"));
    ++deleted;
  }
  if (deleted > 0) STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
  return deleted;
}

// Persists a higher log start offset and trims what hangs off it.
Status LogImpl::MoveLogStartLocked(Offset offset) {
  if (offset <= log_start_.load()) return Status::Ok();
  STRATA_RETURN_IF_ERROR(WriteLogStartOffset(dir_, offset.value(), env_));
  log_start_.store(offset);
  STRATA_RETURN_IF_ERROR(epochs_.TruncateFromStart(offset));
  return ProducerStateManager::PruneSnapshots(dir_, offset, leo_.load(), kKeptSnapshots);
}

Status LogImpl::DeleteRecordsBefore(Offset offset) {
  std::lock_guard lock(mu_);
  if (offset > leo_.load()) {
    return MakeError(Errc::kOutOfRange, fmt::format("{}: delete records before {} past log end {}",
                                                    label_, offset, leo_.load()));
  }
  if (offset <= log_start_.load()) return Status::Ok();
  STRATA_RETURN_IF_ERROR(MoveLogStartLocked(offset));
  log::Get("storage")->info("{}: log start offset moved to {} (DeleteRecords or remote retention)",
                            label_, offset);
  STRATA_ASSIGN_OR_RETURN(int deleted, DeleteSegmentsBelowLocked(offset));
  (void)deleted;
  return Status::Ok();
}

Result<int> LogImpl::EnforceRetention() {
  std::lock_guard lock(mu_);
  if (closed_) return 0;
  const int64_t now = clock_->NowMs();
  const Segment& current = active();
  if (current.size() > 0 && now - current.first_append_ms() > config_.segment_ms) {
    STRATA_RETURN_IF_ERROR(RollLocked());
  }
  if (unflushed_records_ > 0 && now - last_flush_ms_ >= config_.flush_ms) {
    STRATA_RETURN_IF_ERROR(FlushLocked());
  }
  if (!config_.cleanup_delete) return 0;

  return EnforceSizeAndTimeLocked(now);
}

// A tiered log may only drop its oldest segment once remote storage holds it.
bool LogImpl::DeletableByRetentionLocked() const {
  if (segments_.size() <= 1) return false;
  if (!config_.remote_storage_enable) return true;
  return std::next(segments_.begin())->first <= remote_copied_.load();
}

// retention.ms / retention.bytes (local.retention.* for a tiered log, where
// -2 means the retention.* value).
Result<int> LogImpl::EnforceSizeAndTimeLocked(int64_t now) {
  int64_t retention_ms = config_.retention_ms;
  int64_t retention_bytes = config_.retention_bytes;
  if (config_.remote_storage_enable) {
    if (config_.local_retention_ms != -2) retention_ms = config_.local_retention_ms;
    if (config_.local_retention_bytes != -2) retention_bytes = config_.local_retention_bytes;
  }
  int deleted = 0;
  // retention.ms: oldest first, while the segment's newest record is too old.
  while (retention_ms >= 0 && DeletableByRetentionLocked()) {
    STRATA_ASSIGN_OR_RETURN(int64_t largest, segments_.begin()->second->LargestTimestamp());
    if (now - largest <= retention_ms) break;
    STRATA_RETURN_IF_ERROR(DeleteFirstSegmentLocked("retention.ms"));
    ++deleted;
  }
  // retention.bytes: drop whole oldest segments while the rest still exceeds it.
  if (retention_bytes >= 0) {
    int64_t total = 0;
    for (const auto& [base, seg] : segments_) total += int64_t(seg->size());
    int64_t excess = total - retention_bytes;
    while (DeletableByRetentionLocked() &&
           excess - int64_t(segments_.begin()->second->size()) >= 0) {
      excess -= int64_t(segments_.begin()->second->size());
      STRATA_RETURN_IF_ERROR(DeleteFirstSegmentLocked("retention.bytes"));
      ++deleted;
    }
  }
  if (deleted > 0) {
    STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
    STRATA_RETURN_IF_ERROR(MoveLogStartLocked(segments_.begin()->first));
  }
  return deleted;
}

std::vector<SegmentSummary> LogImpl::RolledSegments() const {
  std::lock_guard lock(mu_);
  std::vector<SegmentSummary> out;
  if (closed_ || segments_.empty()) return out;
  for (auto it = segments_.begin(); std::next(it) != segments_.end(); ++it) {
    const Segment& seg = *it->second;
    if (seg.size() == 0) continue;
    out.push_back(SegmentSummary{seg.base_offset(), seg.next_offset() - 1, int64_t(seg.size()),
                                 seg.max_timestamp(), seg.log_path()});
  }
  return out;
}

void LogImpl::SetRemoteCopiedOffset(Offset offset) {
  Offset cur = remote_copied_.load();
  while (offset > cur && !remote_copied_.compare_exchange_weak(cur, offset)) {
  }
}

std::vector<std::pair<LeaderEpoch, Offset>> LogImpl::LeaderEpochEntries() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<LeaderEpoch, Offset>> out;
  for (const auto& e : epochs_.entries()) out.emplace_back(e.epoch, e.start_offset);
  return out;
}

}  // namespace strata::storage
