#include "coordinator/coordinator_log.h"

#include <fmt/format.h>

#include "protocol/batch_builder.h"
#include "protocol/control_record.h"
#include "protocol/record_batch.h"
#include "protocol/records.h"

namespace strata::coordinator {

namespace {

constexpr int32_t kReadChunk = 1 << 20;
constexpr size_t kMaxDecompressed = 64u << 20;

}  // namespace

CoordinatorLog::CoordinatorLog(std::string topic, int32_t partitions, LogProvider logs,
                               Appender appender, Clock* clock)
    : topic_(std::move(topic)),
      partitions_(partitions),
      logs_(std::move(logs)),
      appender_(std::move(appender)),
      clock_(clock) {}

Result<Offset> CoordinatorLog::Append(int32_t partition,
                                      const std::vector<CoordinatorRecord>& records,
                                      std::optional<TxnProducer> txn) {
  if (records.empty()) return kNoOffset;
  const int64_t now = clock_->NowMs();
  protocol::BatchBuilder builder;
  for (const auto& r : records) {
    builder.Add({.key = r.key, .value = r.value, .headers = {}, .timestamp = now});
  }
  // Kafka writes transactional offsets without a sequence (-1).
  if (txn) builder.set_producer(txn->producer_id, txn->producer_epoch, -1).set_transactional(true);
  Bytes batch = builder.Build();
  std::vector<storage::BatchInfo> infos{{.size = static_cast<int32_t>(batch.size()),
                                         .record_count = static_cast<int32_t>(records.size()),
                                         .max_timestamp = now,
                                         .offset_delta_of_max_timestamp = 0}};
  if (txn) {
    infos[0].producer_id = txn->producer_id;
    infos[0].producer_epoch = txn->producer_epoch;
    infos[0].transactional = true;
    infos[0].txn_verification_guard = txn->verification_guard;
  }
  STRATA_ASSIGN_OR_RETURN(Appended at, appender_(partition, MutableByteView(batch), infos));
  const int32_t leader_epoch = at.leader_epoch;
  {
    std::lock_guard lock(last_mu_);
    LastAppend& last = last_[partition];
    // Latest by (epoch, offset): a new term's appends replace an old term's,
    // even below them (the log was truncated in between).
    if (leader_epoch > last.leader_epoch ||
        (leader_epoch == last.leader_epoch && at.last_offset > last.last_offset)) {
      last = {at.last_offset, leader_epoch};
    }
  }
  return at.last_offset;
}

std::optional<CoordinatorLog::LastAppend> CoordinatorLog::LastAppended(int32_t partition) const {
  std::lock_guard lock(last_mu_);
  auto it = last_.find(partition);
  if (it == last_.end()) return std::nullopt;
  return it->second;
}

Status CoordinatorLog::Replay(int32_t partition, const Visitor& visit) const {
  return ReplayWithTransactions(
      partition,
      [&](ByteView key, std::optional<ByteView> value, const RecordBatchOf&) { visit(key, value); },
      [](int64_t, bool) {});
}

Status CoordinatorLog::ReplayWithTransactions(int32_t partition, const TxnVisitor& visit,
                                              const MarkerVisitor& marker) const {
  auto log = logs_(partition);
  if (!log) {
    return MakeError(Errc::kUnavailable, fmt::format("{}-{} is not open", topic_, partition));
  }
  Offset offset = log->log_start_offset();
  const Offset end = log->log_end_offset();
  while (offset < end) {
    STRATA_ASSIGN_OR_RETURN(storage::ReadResult read, log->Read(offset, kReadChunk, end, true));
    if (read.records.empty()) break;
    ByteView data(read.records);
    Offset next = offset;
    while (data.size() >= static_cast<size_t>(protocol::kBatchHeaderSize)) {
      STRATA_ASSIGN_OR_RETURN(protocol::BatchHeader header, protocol::ParseBatchHeader(data));
      if (header.size_in_bytes() > static_cast<int64_t>(data.size())) break;  // partial tail
      ByteView batch = data.subspan(0, static_cast<size_t>(header.size_in_bytes()));
      data = data.subspan(batch.size());
      next = header.last_offset() + 1;
      if (header.last_offset() < offset) continue;
      if (header.control()) {
        STRATA_ASSIGN_OR_RETURN(std::optional<protocol::TxnMarker> m,
                                protocol::ParseTxnMarker(header, batch));
        if (m) marker(header.producer_id, m->type == protocol::ControlType::kCommit);
        continue;
      }
      const RecordBatchOf of{Offset(header.last_offset()),
                             header.transactional() ? header.producer_id : -1};
      STRATA_RETURN_IF_ERROR(protocol::ForEachRecord(
          header, batch, kMaxDecompressed, [&](const protocol::Record& r) -> Status {
            if (header.base_offset + r.offset_delta < offset || !r.key) return Status::Ok();
            visit(*r.key, r.value, of);
            return Status::Ok();
          }));
    }
    if (next <= offset) {
      return MakeError(Errc::kCorrupt,
                       fmt::format("{}-{}: no progress at offset {}", topic_, partition, offset));
    }
    offset = next;
  }
  return Status::Ok();
}

}  // namespace strata::coordinator
