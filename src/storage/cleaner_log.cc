// LogImpl compaction: the cleanable range (Kafka's LogCleanerManager.
// cleanableOffsets / LogToClean), one cleaning pass, and the crash-safe swap
// of cleaned segments (Kafka's replaceSegments). Recovery of an interrupted
// swap is in log_load.cc.
#include <fmt/format.h>

#include <chrono>
#include <unordered_map>

#include "base/log.h"
#include "storage/cleaner_checkpoint.h"
#include "storage/file.h"
#include "storage/log_impl.h"

namespace strata::storage {

namespace fs = std::filesystem;

namespace {

Error InjectedCrash(int step) {
  return MakeError(Errc::kIoError, fmt::format("injected crash after swap step {}", step));
}

}  // namespace

CleaningEstimate LogImpl::EstimateCleaning(int64_t now) const {
  std::lock_guard lock(mu_);
  return PlanCleaningLocked(now, nullptr);
}

// Kafka's maxCompactionDelay: how long the oldest dirty record (by the first
// batch timestamp of each dirty non-active segment) is past max.compaction.lag.ms.
int64_t LogImpl::CompactionDelayLocked(Offset first_dirty, int64_t now) const {
  const int64_t clean_until = now - std::max<int64_t>(config_.max_compaction_lag_ms, 0);
  if (clean_until <= 0) return 0;  // the default (Long.MAX_VALUE) never forces a clean
  int64_t earliest = INT64_MAX;
  for (auto it = segments_.begin(); std::next(it) != segments_.end(); ++it) {
    const Segment& seg = *it->second;
    if (seg.next_offset() <= first_dirty) continue;
    auto first = seg.HeaderAt(0, seg.size());
    if (first.ok() && first->has_value() && (*first)->max_timestamp > 0) {
      earliest = std::min(earliest, (*first)->max_timestamp);
    }
  }
  return earliest < clean_until ? clean_until - earliest : 0;
}

// The dirty section is [checkpoint, first uncleanable): never the active
// segment or a transaction still undecided, nor a segment (or anything after it) whose newest
// record is younger than min.compaction.lag.ms. Fills `input` for a pass when given.
CleaningEstimate LogImpl::PlanCleaningLocked(int64_t now, CleanPassInput* input) const {
  CleaningEstimate e;
  e.compacted = config_.compacted;
  e.min_dirty_ratio = config_.min_cleanable_dirty_ratio;
  if (!e.compacted && input == nullptr) return e;  // not a candidate: skip the work
  Offset first_dirty = cleaner_checkpoint_.load();
  if (first_dirty < log_start_.load() || first_dirty > leo_.load()) first_dirty = log_start_.load();
  e.first_dirty_offset = first_dirty;

  const Offset active_base = segments_.rbegin()->first;
  Offset uncleanable = active_base;
  // Nor a transaction not yet decided (Kafka cleans below the last stable
  // offset): were it aborted, the value it overwrote must still be there.
  if (auto unstable = producers_.txns().FirstUnstableOffset()) {
    uncleanable = std::min(uncleanable, *unstable);
  }
  for (auto it = segments_.begin(); config_.min_compaction_lag_ms > 0 && it->first < active_base;
       ++it) {
    if (it->second->next_offset() <= first_dirty) continue;
    auto largest = it->second->LargestTimestamp();
    if (largest.ok() && *largest > now - config_.min_compaction_lag_ms) {
      uncleanable = it->first;
      break;
    }
  }
  // Round down to a segment base (the dirty section ends on a boundary).
  auto floor_base = [&](Offset offset) {
    auto it = segments_.upper_bound(offset);
    return it == segments_.begin() ? it->first : std::prev(it)->first;
  };
  const Offset first_uncleanable = floor_base(std::max(first_dirty, uncleanable));
  e.first_uncleanable_offset = first_uncleanable;
  const Offset cleanable_from = floor_base(std::min(first_dirty, first_uncleanable));
  for (const auto& [base, seg] : segments_) {
    if (base < first_dirty) e.clean_bytes += int64_t(seg->size());
    if (base >= cleanable_from && base < first_uncleanable)
      e.cleanable_bytes += int64_t(seg->size());
  }
  if (e.cleanable_bytes > 0) e.compaction_delay_ms = CompactionDelayLocked(first_dirty, now);
  const int64_t horizon = earliest_delete_horizon_.load();
  e.tombstones_expired = horizon >= 0 && horizon <= now;
  if (input == nullptr) return e;

  input->dir = dir_;
  input->label = label_;
  input->config = config_;
  input->now = now;
  input->first_dirty = first_dirty;
  input->first_uncleanable = first_uncleanable;
  const auto& holder = segments_.at(floor_base(first_dirty));
  input->first_dirty_position =
      holder->base_offset() <= first_dirty ? holder->IndexPosition(first_dirty) : 0;
  for (const auto& [base, seg] : segments_) {
    if (base < active_base) {
      input->segments.push_back(seg);
      const auto& aborted = seg->txn_index().entries();
      input->aborted.insert(input->aborted.end(), aborted.begin(), aborted.end());
    }
  }
  return e;
}

// The producer's last data offset and epoch; nullopt for an unknown
// (expired) producer, whose batches can all go.
std::optional<LogImpl::ProducerLast> LogImpl::LastOfProducer(int64_t producer_id) const {
  std::lock_guard lock(mu_);
  const ProducerEntry* entry = producers_.Get(producer_id);
  if (entry == nullptr) return std::nullopt;
  ProducerLast last;
  last.epoch = entry->epoch;
  if (!entry->batches.empty()) last.last_data_offset = entry->batches.back().last_offset;
  return last;
}

Result<CleaningResult> LogImpl::Clean(OffsetMap& map, int64_t now) {
  std::unique_lock pass_lock(clean_mu_, std::try_to_lock);
  if (!pass_lock.owns_lock()) {
    // Close and Delete hold clean_mu_ too, after raising the flag: a log
    // being closed is not "being cleaned".
    if (stop_cleaning_.load()) {
      return MakeError(Errc::kShuttingDown, fmt::format("{} is closed", label_));
    }
    return MakeError(Errc::kUnavailable, fmt::format("{} is already being cleaned", label_));
  }
  const auto started = std::chrono::steady_clock::now();
  CleanPassInput input;
  CleaningEstimate plan;
  {
    std::lock_guard lock(mu_);
    if (closed_ || stop_cleaning_.load()) {
      return MakeError(Errc::kShuttingDown, fmt::format("{} is closed", label_));
    }
    plan = PlanCleaningLocked(now, &input);
  }
  if (!plan.compacted) {
    return MakeError(Errc::kInvalidArgument, fmt::format("{} is not compacted", label_));
  }
  if (plan.first_uncleanable_offset <= plan.first_dirty_offset && !plan.tombstones_expired) {
    CleaningResult nothing;
    nothing.first_dirty_offset = nothing.end_offset = plan.first_dirty_offset;
    return nothing;
  }
  // A producer's last batch can only move forward (into the active segment)
  // during the pass, so caching the answer per producer is safe.
  std::unordered_map<int64_t, std::optional<ProducerLast>> lasts;
  CleanPassHooks hooks;
  hooks.is_last_of_producer = [&](const protocol::BatchHeader& h) {
    auto it = lasts.find(h.producer_id);
    if (it == lasts.end()) it = lasts.emplace(h.producer_id, LastOfProducer(h.producer_id)).first;
    const std::optional<ProducerLast>& last = it->second;
    if (!last) return false;
    // After a marker that bumped its epoch (transaction version 2) the
    // producer has no data offset: the marker carries its epoch.
    if (last->last_data_offset == kNoOffset) {
      return h.control() && h.producer_epoch == last->epoch;
    }
    return h.last_offset() == last->last_data_offset;
  };
  hooks.aborted = [this] { return stop_cleaning_.load(); };
  CleanPass pass(std::move(input), std::move(hooks), map);
  STRATA_ASSIGN_OR_RETURN(CleaningResult result, RunPass(pass));
  result.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - started)
                           .count();
  log::Get("storage")->info(
      "{}: cleaned up to offset {} (dirty from {}{}): {} segments into {}, {} -> {} bytes, "
      "{} of {} records kept, {} ms",
      label_, result.end_offset, result.first_dirty_offset, result.map_full ? ", map full" : "",
      result.segments_cleaned, result.segments_written, result.bytes_read, result.bytes_written,
      result.records_retained, result.records_read, result.duration_ms);
  return result;
}

// Map, then clean and swap group by group, then advance the checkpoint.
Result<CleaningResult> LogImpl::RunPass(CleanPass& pass) {
  STRATA_RETURN_IF_ERROR(pass.BuildOffsetMap());
  int cleaned = 0, written = 0, skipped = 0;
  for (const SegmentGroup& group : pass.GroupSegments()) {
    STRATA_ASSIGN_OR_RETURN(CleanedGroup files, pass.CleanGroup(group));
    STRATA_ASSIGN_OR_RETURN(bool swapped, SwapInCleaned(group, files));
    cleaned += swapped ? int(group.size()) : 0;
    written += swapped ? 1 : 0;
    skipped += swapped ? 0 : 1;
  }
  {
    std::lock_guard lock(mu_);
    if (closed_) return MakeError(Errc::kShuttingDown, fmt::format("{} is closed", label_));
    STRATA_RETURN_IF_ERROR(WriteCleanerCheckpoint(dir_, pass.End().value(), env_));
    cleaner_checkpoint_.store(pass.End());
  }
  CleaningResult result = pass.counters();
  earliest_delete_horizon_.store(result.earliest_delete_horizon);
  result.segments_cleaned = cleaned;
  result.segments_written = written;
  result.groups_skipped = skipped;
  return result;
}

// Swaps the cleaned files of `group` in under the mutex; false (files
// discarded) when retention or DeleteRecords removed one of its segments.
Result<bool> LogImpl::SwapInCleaned(const SegmentGroup& group, const CleanedGroup& cleaned) {
  const Offset base = cleaned.base;
  std::lock_guard lock(mu_);
  auto discard = [&] { (void)RemoveSegmentFiles(dir_, base, kCleanedSuffix); };
  if (closed_) {
    discard();
    return MakeError(Errc::kShuttingDown, fmt::format("{} is closed", label_));
  }
  for (const auto& seg : group) {
    auto it = segments_.find(seg->base_offset());
    if (it == segments_.end() || it->second != seg) {
      discard();
      log::Get("storage")->info("{}: segment {} went away while cleaning; dropped its group",
                                label_, seg->base_offset());
      return false;
    }
  }
  // The cleaned segment lists the aborted transactions whose markers it
  // keeps and whose batches were still there when the pass read them.
  Status st = WriteCleanedTxnIndexLocked(cleaned);
  if (!st.ok()) {
    discard();
    return st.take_error();
  }
  st = SwapFilesLocked(group, base);
  if (!st.ok()) {
    // Readers keep using the old segments' open fds; the next Open finishes
    // or rolls back the swap from the files.
    io_failed_ = true;
    return st.take_error();
  }
  auto opened = Segment::Open(dir_, base, config_.segment_index_bytes, {}, env_);
  Status loaded = opened.ok() ? opened.value()->CheckIndexes() : Status(opened.error());
  if (loaded.ok()) loaded = opened.value()->LoadTail();
  if (!loaded.ok()) {
    io_failed_ = true;
    return loaded.take_error();
  }
  for (const auto& seg : group) segments_.erase(seg->base_offset());
  segments_[base] = std::move(opened).value();
  for (const auto& seg : group) {
    STRATA_RETURN_IF_ERROR(RemoveSegmentFiles(dir_, seg->base_offset(), kDeletedSuffix));
  }
  STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
  return true;
}

Status LogImpl::WriteCleanedTxnIndexLocked(const CleanedGroup& cleaned) {
  if (cleaned.aborted.empty()) return Status::Ok();
  fs::path path = dir_ / OffsetFileName(cleaned.base.value(), kTxnIndexSuffix);
  path += std::string(kCleanedSuffix);
  STRATA_ASSIGN_OR_RETURN(auto index, TxnIndex::Create(path, cleaned.base, env_));
  for (const AbortedTxn& txn : cleaned.aborted) STRATA_RETURN_IF_ERROR(index->Append(txn));
  return index->Flush();
}

// The file steps, each made durable before the next: .cleaned -> .swap (the
// commit point), replaced segments -> .deleted, .swap -> live names.
Status LogImpl::SwapFilesLocked(const SegmentGroup& group, Offset base) {
  auto crash = [&](SwapStep step) { return swap_crash_step_ == static_cast<int>(step); };
  if (crash(SwapStep::kCleanedWritten)) return InjectedCrash(0);
  STRATA_RETURN_IF_ERROR(RenameSegmentFiles(dir_, base, kCleanedSuffix, kSwapSuffix));
  STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
  if (crash(SwapStep::kRenamedToSwap)) return InjectedCrash(1);
  for (size_t i = 0; i < group.size(); ++i) {
    STRATA_RETURN_IF_ERROR(RenameSegmentFiles(dir_, group[i]->base_offset(), "", kDeletedSuffix));
    if (i == 0 && crash(SwapStep::kFirstOldDeleted)) return InjectedCrash(2);
  }
  STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
  if (crash(SwapStep::kAllOldDeleted)) return InjectedCrash(3);
  STRATA_RETURN_IF_ERROR(RenameSegmentFiles(dir_, base, kSwapSuffix, ""));
  STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
  if (crash(SwapStep::kSwapLive)) return InjectedCrash(4);
  return Status::Ok();
}

}  // namespace strata::storage
