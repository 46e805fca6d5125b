// LogImpl's transactions: end-transaction markers read from their batches,
// aborted transactions indexed in the segment holding their marker, the last
// stable offset, and the aborted transactions a read_committed fetch needs.
#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "protocol/control_record.h"
#include "storage/log_impl.h"

namespace strata::storage {

Result<ProducerBatch> LogImpl::ProducerBatchOf(const protocol::BatchHeader& header,
                                               ByteView batch) {
  ProducerBatch b = ProducerBatch::FromHeader(header);
  if (!header.control()) return b;
  auto marker = protocol::ParseTxnMarker(header, batch);
  if (!marker.ok()) {
    return MakeError(Errc::kCorrupt, fmt::format("control batch at {}: {}", header.base_offset,
                                                 marker.error().message));
  }
  b.marker = *marker;
  return b;
}

Status LogImpl::IndexAbortedLocked(Segment& segment, const std::vector<CompletedTxn>& completed) {
  for (const CompletedTxn& txn : completed) {
    if (!txn.aborted) continue;
    Status st = segment.txn_index().Append(
        {txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset});
    if (!st.ok()) {
      // The marker is in the log: recovery from a snapshot below it (none
      // above it is written from now on) puts the entry back.
      txn_index_lost_ = true;
      io_failed_ = true;
      log::Get("storage")->error("{}: indexing the transaction aborted at {} failed: {}", label_,
                                 txn.last_offset, st.error().message);
      return st;
    }
  }
  return Status::Ok();
}

Status LogImpl::WriteProducerSnapshotLocked(Offset offset) {
  if (txn_index_lost_) return Status::Ok();
  return producers_.WriteSnapshot(dir_, offset, env_);
}

void LogImpl::UpdateLastStableOffsetLocked() {
  // As the partition reports its mark: within the log's bounds (a
  // truncation or a restart at a new offset moves them under it).
  const Offset hw = std::clamp(high_watermark_, log_start_.load(), leo_.load());
  const std::optional<Offset> unstable = producers_.txns().FirstUnstableOffset();
  lso_.store(unstable ? std::min(*unstable, hw) : hw);
}

void LogImpl::SetHighWatermark(Offset high_watermark) {
  std::lock_guard lock(mu_);
  // Callers report without a lock of their own, so a report may arrive
  // after a newer one: the mark only rises here (a truncation lowers it).
  high_watermark_ = std::max(high_watermark_, high_watermark);
  producers_.OnHighWatermark(high_watermark_);
  UpdateLastStableOffsetLocked();
}

std::vector<AbortedTxn> LogImpl::AbortedTransactions(Offset from, Offset upper) const {
  std::lock_guard lock(mu_);
  std::vector<AbortedTxn> aborted;
  auto it = segments_.upper_bound(from);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end(); ++it) {
    AbortedTxnSearch found = it->second->txn_index().Collect(from, upper);
    aborted.insert(aborted.end(), found.aborted.begin(), found.aborted.end());
    if (found.complete) break;
  }
  return aborted;
}

std::vector<ProducerView> LogImpl::ActiveProducers() const {
  std::lock_guard lock(mu_);
  std::vector<ProducerView> out;
  for (const auto& [id, entry] : producers_.entries()) {
    ProducerView v;
    v.producer_id = id;
    v.producer_epoch = entry.epoch;
    v.last_sequence = entry.batches.empty() ? -1 : entry.batches.back().last_seq;
    v.last_timestamp = entry.last_timestamp;
    v.coordinator_epoch = entry.coordinator_epoch;
    v.current_txn_start_offset = entry.current_txn_first_offset;
    out.push_back(v);
  }
  std::sort(out.begin(), out.end(), [](const ProducerView& a, const ProducerView& b) {
    return a.producer_id < b.producer_id;
  });
  return out;
}

TxnVerification LogImpl::StartTxnVerification(int64_t producer_id, int16_t producer_epoch) {
  std::lock_guard lock(mu_);
  return producers_.StartVerification(producer_id, producer_epoch, clock_->NowMs());
}

size_t LogImpl::ExpireProducers(int64_t expiration_ms) {
  std::lock_guard lock(mu_);
  return producers_.RemoveExpired(clock_->NowMs(), expiration_ms);
}

}  // namespace strata::storage
