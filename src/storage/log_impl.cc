#include "storage/log_impl.h"

#include <fmt/format.h>

#include "base/log.h"
#include "storage/checkpoints.h"

namespace strata::storage {

namespace fs = std::filesystem;
using protocol::BatchHeader;

LogImpl::LogImpl(fs::path dir, const LogConfig& config, Clock* clock, Env* env)
    : dir_(std::move(dir)),
      label_(dir_.filename().string()),
      clock_(clock),
      env_(env),
      config_(config) {}

Result<std::unique_ptr<Log>> Log::Open(const fs::path& dir, const LogConfig& config, Clock* clock,
                                       Env* env) {
  STRATA_ASSIGN_OR_RETURN(auto log, LogImpl::Load(dir, config, clock, env));
  return std::unique_ptr<Log>(std::move(log));
}

int64_t LogImpl::segment_bytes_limit() const {
  // Index positions are 32-bit, as in Kafka where segment.bytes is an int.
  return std::min<int64_t>(config_.segment_bytes, INT32_MAX);
}

Status LogImpl::SplitBatches(MutableByteView batches, const std::vector<BatchInfo>& infos,
                             std::vector<MutableByteView>* views,
                             std::vector<BatchHeader>* headers) const {
  size_t pos = 0;
  for (const BatchInfo& info : infos) {
    if (info.size < protocol::kBatchHeaderSize || batches.size() - pos < size_t(info.size)) {
      return MakeError(Errc::kInvalidArgument,
                       fmt::format("batch info size {} does not fit the buffer", info.size));
    }
    MutableByteView view = batches.subspan(pos, size_t(info.size));
    STRATA_ASSIGN_OR_RETURN(BatchHeader h, protocol::ParseBatchHeader(view));
    if (h.size_in_bytes() != info.size || h.last_offset_delta < 0) {
      return MakeError(
          Errc::kInvalidArgument,
          fmt::format("batch length {} disagrees with info size {}", h.size_in_bytes(), info.size));
    }
    if (info.size > config_.max_message_bytes) {
      return MakeError(Errc::kTooLarge,
                       fmt::format("batch of {} bytes exceeds max.message.bytes {}", info.size,
                                   config_.max_message_bytes));
    }
    views->push_back(view);
    headers->push_back(h);
    pos += size_t(info.size);
  }
  if (pos != batches.size()) {
    return MakeError(Errc::kInvalidArgument, "batch infos do not cover the buffer");
  }
  if (int64_t(pos) > segment_bytes_limit()) {
    return MakeError(Errc::kTooLarge, fmt::format("append of {} bytes exceeds segment.bytes", pos));
  }
  return Status::Ok();
}

// Gives each batch its offsets from the log end and checks producer
// sequences, all before touching the disk. Returns the original batch's
// result when a batch retries one of its producer's last five.
Result<std::optional<AppendResult>> LogImpl::AssignOffsets(
    const std::vector<MutableByteView>& views, std::vector<BatchHeader>* headers,
    const std::vector<BatchInfo>& infos, AppendOrigin origin,
    ProducerStateManager::Staged* staged) const {
  Offset next = leo_.load();
  for (size_t i = 0; i < headers->size(); ++i) {
    BatchHeader& h = (*headers)[i];
    h.base_offset = next;
    next = h.last_offset() + 1;
    if (!h.idempotent()) continue;
    STRATA_ASSIGN_OR_RETURN(ProducerBatch pb, ProducerBatchOf(h, ByteView(views[i])));
    pb.verification_guard = infos[i].txn_verification_guard;
    pb.marker_transaction_version = infos[i].marker_transaction_version;
    // The coordinator's writes all carry sequence 0: none is a retry.
    if (auto dup = origin == AppendOrigin::kClient ? producers_.FindDuplicate(pb) : std::nullopt) {
      AppendResult r;
      r.base_offset = dup->first_offset;
      r.last_offset = dup->last_offset;
      r.log_append_time = config_.message_timestamp_log_append ? dup->timestamp : -1;
      r.log_start_offset = log_start_.load();
      r.duplicate = true;
      return std::optional<AppendResult>(r);
    }
    STRATA_RETURN_IF_ERROR(producers_.Validate(pb, origin, staged));
  }
  return std::optional<AppendResult>();
}

// The in-place rewrites a leader applies: offsets, leader epoch, and the
// LogAppendTime max timestamp (which recomputes the CRC).
void LogImpl::StampBatches(const std::vector<MutableByteView>& views,
                           std::vector<BatchHeader>* headers, LeaderEpoch leader_epoch,
                           int64_t now) const {
  for (size_t i = 0; i < views.size(); ++i) {
    BatchHeader& h = (*headers)[i];
    protocol::SetBaseOffset(views[i], h.base_offset);
    protocol::SetPartitionLeaderEpoch(views[i], leader_epoch.value());
    h.partition_leader_epoch = leader_epoch.value();
    if (config_.message_timestamp_log_append) {
      protocol::SetLogAppendTime(views[i], now);
      h.max_timestamp = now;
      h.attributes = static_cast<int16_t>(h.attributes | 0x8);
    }
  }
}

Result<AppendResult> LogImpl::Append(MutableByteView batches, const std::vector<BatchInfo>& infos,
                                     LeaderEpoch leader_epoch, AppendOrigin origin) {
  std::lock_guard lock(mu_);
  if (closed_) return MakeError(Errc::kShuttingDown, fmt::format("{} is closed", label_));
  if (infos.empty()) return MakeError(Errc::kInvalidArgument, "no batches to append");
  const int64_t now = clock_->NowMs();
  std::vector<MutableByteView> views;
  std::vector<BatchHeader> headers;
  STRATA_RETURN_IF_ERROR(SplitBatches(batches, infos, &views, &headers));
  ProducerStateManager::Staged staged;
  STRATA_ASSIGN_OR_RETURN(auto duplicate, AssignOffsets(views, &headers, infos, origin, &staged));
  if (duplicate) return *duplicate;
  const Offset first = headers.front().base_offset;
  const Offset next = headers.back().last_offset() + 1;

  if (ShouldRoll(int64_t(batches.size()), next - 1, now)) STRATA_RETURN_IF_ERROR(RollLocked());
  StampBatches(views, &headers, leader_epoch, now);
  if (leader_epoch > epochs_.latest_epoch()) {
    STRATA_RETURN_IF_ERROR(epochs_.Assign(leader_epoch, first));
  }

  Segment& seg = active();
  const uint64_t size_before = seg.size();
  Status written = seg.Append(batches, headers, config_.index_interval_bytes);
  if (!written.ok() && seg.size() == size_before) return written.take_error();  // nothing kept
  if (size_before == 0) seg.set_first_append_ms(now);
  const std::vector<CompletedTxn> completed = producers_.Commit(std::move(staged));
  leo_.store(next);
  Status indexed = IndexAbortedLocked(seg, completed);
  if (written.ok()) written = std::move(indexed);
  UpdateLastStableOffsetLocked();
  if (!written.ok()) {
    // The batches are in the log but an index write failed: keep them (a
    // retry is answered as a duplicate) and force recovery on next Open.
    io_failed_ = true;
    log::Get("storage")->error("{}: index write failed after append at {}: {}", label_, first,
                               written.error().message);
    return written.take_error();
  }

  AppendResult result;
  result.base_offset = first;
  result.last_offset = next - 1;
  result.log_append_time = config_.message_timestamp_log_append ? now : -1;
  result.log_start_offset = log_start_.load();
  STRATA_RETURN_IF_ERROR(MaybeFlushLocked(next - first, now));
  return result;
}

bool LogImpl::ShouldRoll(int64_t append_bytes, Offset max_offset, int64_t now) const {
  const Segment& seg = active();
  if (seg.size() == 0) return false;
  return int64_t(seg.size()) > segment_bytes_limit() - append_bytes ||
         now - seg.first_append_ms() > config_.segment_ms || seg.IndexFull() ||
         max_offset - seg.base_offset() > INT32_MAX;
}

Status LogImpl::RollLocked() {
  Segment& old = active();
  if (old.size() == 0) return Status::Ok();
  const Offset base = leo_.load();
  STRATA_RETURN_IF_ERROR(old.OnBecomeInactive());
  // Rolled segments are made durable here, so after a crash only the active
  // segment needs a recovery scan.
  STRATA_RETURN_IF_ERROR(old.Flush());
  STRATA_ASSIGN_OR_RETURN(auto seg,
                          Segment::Create(dir_, base, config_.segment_index_bytes, {}, env_));
  segments_[base] = std::move(seg);
  STRATA_RETURN_IF_ERROR(env_->SyncDir(dir_));
  STRATA_RETURN_IF_ERROR(WriteProducerSnapshotLocked(base));
  STRATA_RETURN_IF_ERROR(
      ProducerStateManager::PruneSnapshots(dir_, log_start_.load(), base, kKeptSnapshots, env_));
  log::Get("storage")->info("{}: rolled new segment at offset {} ({} segments)", label_, base,
                            segments_.size());
  if (roll_listener_) roll_listener_();
  return Status::Ok();
}

Offset LogImpl::active_segment_base_offset() const {
  std::lock_guard lock(mu_);
  return active().base_offset();
}

Status LogImpl::Roll() {
  std::lock_guard lock(mu_);
  if (closed_) return MakeError(Errc::kShuttingDown, fmt::format("{} is closed", label_));
  return RollLocked();
}

void LogImpl::SetRollListener(std::function<void()> listener) {
  std::lock_guard lock(mu_);
  roll_listener_ = std::move(listener);
}

Result<LogImpl::ReadSpan> LogImpl::Locate(Offset offset, int32_t max_bytes, Offset max_offset,
                                          bool min_one_batch) const {
  ReadSpan span;
  uint64_t limit = 0;
  uint64_t from = 0;
  {
    std::lock_guard lock(mu_);
    span.log_start_offset = log_start_.load();
    span.log_end_offset = leo_.load();
    if (offset < span.log_start_offset || offset > span.log_end_offset) {
      return MakeError(Errc::kOutOfRange,
                       fmt::format("{}: offset {} outside [{}, {}]", label_, offset,
                                   span.log_start_offset, span.log_end_offset));
    }
    if (offset == span.log_end_offset || offset >= max_offset) return span;
    auto it = segments_.upper_bound(offset);
    if (it != segments_.begin()) --it;
    while (it != segments_.end() && it->second->next_offset() <= offset) ++it;
    if (it == segments_.end()) return span;
    span.segment = it->second;
    limit = span.segment->size();
    from = span.segment->IndexPosition(offset);
  }
  const Segment& seg = *span.segment;
  STRATA_ASSIGN_OR_RETURN(auto first, seg.FindBatch(offset, from, limit));
  if (!first) return span;
  // Whole batches from the one containing `offset`, within max_bytes (the
  // first regardless when min_one_batch). As in Kafka, a batch reaching
  // max_offset (the high watermark) is left out entirely.
  const uint64_t start = first->first;
  uint64_t end = start;
  STRATA_RETURN_IF_ERROR(seg.ForEachBatch(start, limit, [&](const BatchHeader& h, uint64_t pos) {
    if (h.last_offset() >= max_offset) return false;
    uint64_t next_end = pos + uint64_t(h.size_in_bytes());
    bool fits = int64_t(next_end - start) <= int64_t(max_bytes);
    if (!fits && !(min_one_batch && end == start)) return false;
    end = next_end;
    return fits;
  }));
  span.start = start;
  span.end = end;
  return span;
}

Result<ReadResult> LogImpl::Read(Offset offset, int32_t max_bytes, Offset max_offset,
                                 bool min_one_batch) const {
  STRATA_ASSIGN_OR_RETURN(ReadSpan span, Locate(offset, max_bytes, max_offset, min_one_batch));
  ReadResult result;
  result.log_start_offset = span.log_start_offset;
  result.log_end_offset = span.log_end_offset;
  if (span.end > span.start) {
    STRATA_ASSIGN_OR_RETURN(result.records,
                            span.segment->Read(span.start, size_t(span.end - span.start)));
  }
  return result;
}

Result<RegionReadResult> LogImpl::ReadRegion(Offset offset, int32_t max_bytes, Offset max_offset,
                                             bool min_one_batch) const {
  STRATA_ASSIGN_OR_RETURN(ReadSpan span, Locate(offset, max_bytes, max_offset, min_one_batch));
  RegionReadResult result;
  result.log_start_offset = span.log_start_offset;
  result.log_end_offset = span.log_end_offset;
  if (span.end > span.start) {
    result.region = Segment::Region(span.segment, span.start, span.end - span.start);
  }
  return result;
}

Status LogImpl::FlushLocked() {
  STRATA_RETURN_IF_ERROR(active().Flush());
  unflushed_records_ = 0;
  last_flush_ms_ = clock_->NowMs();
  return Status::Ok();
}

Status LogImpl::MaybeFlushLocked(int64_t records, int64_t now) {
  unflushed_records_ += records;
  if (unflushed_records_ >= config_.flush_messages || now - last_flush_ms_ >= config_.flush_ms) {
    return FlushLocked();
  }
  return Status::Ok();
}

Status LogImpl::Flush() {
  std::lock_guard lock(mu_);
  // A closed or deleted log has nothing to flush (and no segments): callers
  // such as the periodic flush may still hold it after a topic deletion.
  if (closed_) return Status::Ok();
  return FlushLocked();
}

Result<bool> LogImpl::FlushIfDue() {
  std::lock_guard lock(mu_);
  if (closed_ || unflushed_records_ == 0) return false;
  if (clock_->NowMs() - last_flush_ms_ < config_.flush_ms) return false;
  STRATA_RETURN_IF_ERROR(FlushLocked());
  return true;
}

Status LogImpl::Close() {
  // Stop a cleaning pass first (it checks the flag between batches).
  stop_cleaning_.store(true);
  std::lock_guard pass(clean_mu_);
  std::lock_guard lock(mu_);
  if (closed_) return Status::Ok();
  closed_ = true;
  STRATA_RETURN_IF_ERROR(active().OnBecomeInactive());
  STRATA_RETURN_IF_ERROR(FlushLocked());
  const Offset leo = leo_.load();
  STRATA_RETURN_IF_ERROR(WriteProducerSnapshotLocked(leo));
  STRATA_RETURN_IF_ERROR(
      ProducerStateManager::PruneSnapshots(dir_, log_start_.load(), leo, kKeptSnapshots, env_));
  if (io_failed_) return Status::Ok();  // leave the log to be recovered
  return WriteCleanShutdownMarker(dir_, env_);
}

Status LogImpl::Delete() {
  stop_cleaning_.store(true);
  std::lock_guard pass(clean_mu_);
  std::lock_guard lock(mu_);
  closed_ = true;
  segments_.clear();
  std::error_code ec;
  fs::remove_all(dir_, ec);
  if (ec) {
    return MakeError(Errc::kIoError, fmt::format("remove {}: {}", dir_.string(), ec.message()));
  }
  log::Get("storage")->info("{}: deleted log directory", label_);
  return Status::Ok();
}

void LogImpl::UpdateConfig(const LogConfig& config) {
  std::lock_guard lock(mu_);
  config_ = config;
  for (auto& [base, seg] : segments_) seg->set_max_index_bytes(config.segment_index_bytes);
}

std::pair<LeaderEpoch, Offset> LogImpl::EndOffsetForEpoch(LeaderEpoch epoch) const {
  std::lock_guard lock(mu_);
  return epochs_.EndOffsetFor(epoch, leo_.load());
}

LeaderEpoch LogImpl::latest_epoch() const {
  std::lock_guard lock(mu_);
  return epochs_.latest_epoch();
}

int64_t LogImpl::size_bytes() const {
  std::lock_guard lock(mu_);
  int64_t total = 0;
  for (const auto& [base, seg] : segments_) total += int64_t(seg->size());
  return total;
}

int64_t LogImpl::ApproximateBytesBetween(Offset from, Offset to) const {
  std::lock_guard lock(mu_);
  double total = 0;
  for (auto it = segments_.begin(); it != segments_.end(); ++it) {
    const Offset base = it->first;
    auto next = std::next(it);
    const Offset end = next == segments_.end() ? leo_.load() : next->first;
    const Offset lo = std::max(base, from), hi = std::min(end, to);
    if (hi <= lo || end <= base) continue;
    total += double(it->second->size()) * double(hi - lo) / double(end - base);
  }
  return static_cast<int64_t>(total);
}

int LogImpl::segment_count() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(segments_.size());
}

}  // namespace strata::storage
