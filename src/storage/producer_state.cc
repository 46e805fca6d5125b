#include "storage/producer_state.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "protocol/crc32c.h"
#include "storage/file.h"

namespace strata::storage {

namespace fs = std::filesystem;

namespace {

constexpr int16_t kSnapshotVersion = 1;
constexpr size_t kCrcOffset = 2;
constexpr size_t kEntriesOffset = 6;
// producerId 8 + epoch 2 + lastSeq 4 + lastOffset 8 + offsetDelta 4 +
// timestamp 8 + coordinatorEpoch 4 + currentTxnFirstOffset 8.
constexpr size_t kSnapshotEntrySize = 46;

bool InSequence(int32_t last_seq, int32_t next_seq) {
  return int64_t(next_seq) == int64_t(last_seq) + 1 || (next_seq == 0 && last_seq == INT32_MAX);
}

}  // namespace

ProducerBatch ProducerBatch::FromHeader(const protocol::BatchHeader& h) {
  ProducerBatch b;
  b.producer_id = h.producer_id;
  b.epoch = h.producer_epoch;
  b.first_seq = h.base_sequence;
  b.last_seq = h.last_sequence();
  b.first_offset = h.base_offset;
  b.last_offset = h.last_offset();
  b.max_timestamp = h.max_timestamp;
  b.transactional = h.transactional();
  b.control = h.control();
  return b;
}

const ProducerEntry* ProducerStateManager::Get(int64_t producer_id) const {
  auto it = producers_.find(producer_id);
  return it == producers_.end() ? nullptr : &it->second;
}

std::optional<ProducerBatchMeta> ProducerStateManager::FindDuplicate(const ProducerBatch& b) const {
  const ProducerEntry* entry = Get(b.producer_id);
  if (entry == nullptr || entry->epoch != b.epoch || b.control) return std::nullopt;
  for (const ProducerBatchMeta& m : entry->batches) {
    if (m.first_seq == b.first_seq && m.last_seq == b.last_seq) return m;
  }
  return std::nullopt;
}

Status ProducerStateManager::CheckEpoch(const ProducerBatch& b,
                                        const ProducerEntry& current) const {
  const bool bumped_marker = b.control && b.marker_transaction_version >= 2;
  if (!bumped_marker && b.epoch >= current.epoch) return Status::Ok();
  if (bumped_marker) {
    if (b.epoch > current.epoch) return Status::Ok();
    // The same marker again (its answer was lost, or a new coordinator
    // resends what it loaded): the transaction has ended, the marker is
    // harmless. With a transaction open at this epoch it would end the
    // wrong one.
    if (b.epoch == current.epoch && current.current_txn_first_offset < 0_o) return Status::Ok();
  }
  return MakeError(
      Errc::kInvalidProducerEpoch,
      fmt::format("producer {} epoch {} is {} current epoch {}", b.producer_id, b.epoch,
                  bumped_marker ? "not newer than" : "older than", current.epoch));
}

Status ProducerStateManager::CheckSequence(const ProducerBatch& b,
                                           const ProducerEntry& current) const {
  if (b.epoch != current.epoch) {
    // A bumped epoch restarts sequences at 0. A producer we know nothing
    // about (current.epoch == -1) is accepted at any sequence: its state
    // may have expired or been deleted with old segments, which is what
    // Kafka 2.5+ does instead of UNKNOWN_PRODUCER_ID.
    if (b.first_seq != 0 && current.epoch != -1) {
      return MakeError(Errc::kOutOfOrderSequence,
                       fmt::format("producer {} new epoch {} starts at sequence {}, not 0",
                                   b.producer_id, b.epoch, b.first_seq));
    }
    return Status::Ok();
  }
  int32_t last_seq = current.batches.empty() ? -1 : current.batches.back().last_seq;
  if (!InSequence(last_seq, b.first_seq)) {
    return MakeError(Errc::kOutOfOrderSequence,
                     fmt::format("producer {} epoch {}: sequence {} does not follow {}",
                                 b.producer_id, b.epoch, b.first_seq, last_seq));
  }
  return Status::Ok();
}

Status ProducerStateManager::Validate(const ProducerBatch& b, AppendOrigin origin,
                                      Staged* staged) const {
  ProducerEntry current;
  if (auto it = staged->entries.find(b.producer_id); it != staged->entries.end()) {
    current = it->second;
  } else if (const ProducerEntry* committed = Get(b.producer_id)) {
    current = *committed;
  }
  if (origin != AppendOrigin::kReplication) {
    STRATA_RETURN_IF_ERROR(CheckEpoch(b, current));
    if (b.control) {
      if (b.marker && b.marker->coordinator_epoch < current.coordinator_epoch) {
        return MakeError(
            Errc::kTxnCoordinatorFenced,
            fmt::format("producer {}: marker from coordinator epoch {}, older than {}",
                        b.producer_id, b.marker->coordinator_epoch, current.coordinator_epoch));
      }
    } else {
      if (origin == AppendOrigin::kClient) STRATA_RETURN_IF_ERROR(CheckSequence(b, current));
      if (b.transactional && current.current_txn_first_offset < 0_o && b.verification_guard != 0) {
        // Verified against a transaction that has ended since (its marker
        // voided the guard): it must not open another one here.
        auto v = verifications_.find(b.producer_id);
        if (v == verifications_.end() || v->second.guard != b.verification_guard) {
          return MakeError(Errc::kInvalidTxnState,
                           fmt::format("producer {}: the transaction this write was verified in "
                                       "ended before it was appended",
                                       b.producer_id));
        }
      }
      if (!b.transactional && current.current_txn_first_offset >= 0_o) {
        return MakeError(Errc::kInvalidTxnState,
                         fmt::format("producer {} wrote outside its transaction open since {}",
                                     b.producer_id, current.current_txn_first_offset));
      }
    }
  }
  if (b.control) {
    ApplyMarker(b, &current, staged);
  } else {
    ApplyData(b, &current, staged);
  }
  if (b.control || b.verification_guard != 0) staged->ended.push_back(b.producer_id);
  staged->entries[b.producer_id] = std::move(current);
  return Status::Ok();
}

TxnVerification ProducerStateManager::StartVerification(int64_t producer_id, int16_t epoch,
                                                        int64_t now_ms) {
  const ProducerEntry* entry = Get(producer_id);
  TxnVerification out;
  out.ongoing = entry != nullptr && entry->epoch == epoch && entry->current_txn_first_offset >= 0_o;
  // Batches in flight together share one guard (Kafka's
  // maybeCreateVerificationStateEntry): the first to land opens the
  // transaction, and the others find it open.
  // A zombie's older epoch never replaces the newer instance's guard (its
  // append fails the epoch check anyway).
  auto [it, fresh] = verifications_.try_emplace(producer_id);
  if (fresh || epoch > it->second.epoch) it->second = {++next_guard_, epoch, now_ms};
  out.guard = it->second.guard;
  return out;
}

size_t ProducerStateManager::RemoveExpired(int64_t now_ms, int64_t expiration_ms) {
  const size_t before = producers_.size();
  std::erase_if(producers_, [&](const auto& item) {
    const ProducerEntry& e = item.second;
    return e.current_txn_first_offset < 0_o && now_ms - e.last_timestamp >= expiration_ms;
  });
  std::erase_if(verifications_,
                [&](const auto& item) { return now_ms - item.second.taken_ms >= expiration_ms; });
  return before - producers_.size();
}

std::vector<CompletedTxn> ProducerStateManager::Commit(Staged&& staged) {
  for (auto& [id, entry] : staged.entries) producers_[id] = std::move(entry);
  // Every transaction the append opened counts before those it completed
  // are given their last stable offsets (as Kafka orders it).
  for (const auto& [first, producer] : staged.started) txns_.Start(producer, first);
  for (CompletedTxn& txn : staged.completed) txns_.Complete(txn);
  for (int64_t producer : staged.ended) verifications_.erase(producer);
  return std::move(staged.completed);
}

std::vector<CompletedTxn> ProducerStateManager::Replay(const ProducerBatch& b) {
  if (b.producer_id < 0) return {};
  Staged staged;
  Status st = Validate(b, AppendOrigin::kReplication, &staged);
  (void)st;  // the replication origin is never refused
  return Commit(std::move(staged));
}

void ProducerStateManager::ApplyData(const ProducerBatch& b, ProducerEntry* entry, Staged* staged) {
  if (b.epoch != entry->epoch) {
    entry->batches.clear();
    entry->epoch = b.epoch;
  }
  entry->batches.push_back(
      {b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.max_timestamp});
  while (entry->batches.size() > ProducerEntry::kMaxBatches) entry->batches.pop_front();
  if (b.transactional && entry->current_txn_first_offset < 0_o) {
    entry->current_txn_first_offset = b.first_offset;
    staged->started[b.first_offset] = b.producer_id;
  }
  entry->last_timestamp = b.max_timestamp;
}

void ProducerStateManager::ApplyMarker(const ProducerBatch& b, ProducerEntry* entry,
                                       Staged* staged) {
  if (b.epoch != entry->epoch) {
    entry->batches.clear();
    entry->epoch = b.epoch;
  }
  // A marker with no transaction open (a retried one) is kept in the log
  // all the same; it completes nothing.
  if (entry->current_txn_first_offset >= 0_o) {
    CompletedTxn txn;
    txn.producer_id = b.producer_id;
    txn.first_offset = entry->current_txn_first_offset;
    txn.last_offset = b.last_offset;
    txn.aborted = b.marker && b.marker->type == protocol::ControlType::kAbort;
    staged->completed.push_back(txn);
  }
  entry->current_txn_first_offset = kNoOffset;
  if (b.marker) entry->coordinator_epoch = b.marker->coordinator_epoch;
  entry->last_timestamp = b.max_timestamp;
}

void ProducerStateManager::RebuildOpenTxns() {
  txns_.Clear();
  for (const auto& [id, entry] : producers_) {
    if (entry.current_txn_first_offset >= 0_o) txns_.Start(id, entry.current_txn_first_offset);
  }
}

Bytes ProducerStateManager::EncodeSnapshot() const {
  std::vector<int64_t> ids;
  ids.reserve(producers_.size());
  for (const auto& [id, entry] : producers_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());  // deterministic files
  Bytes out(kEntriesOffset + 4 + ids.size() * kSnapshotEntrySize);
  StoreBE16(out.data(), static_cast<uint16_t>(kSnapshotVersion));
  StoreBE32(out.data() + kEntriesOffset, static_cast<uint32_t>(ids.size()));
  uint8_t* p = out.data() + kEntriesOffset + 4;
  for (int64_t id : ids) {
    const ProducerEntry& e = producers_.at(id);
    ProducerBatchMeta last;
    if (!e.batches.empty()) last = e.batches.back();
    int32_t offset_delta = e.batches.empty() ? 0 : int32_t(last.last_offset - last.first_offset);
    StoreBE64(p, static_cast<uint64_t>(id));
    StoreBE16(p + 8, static_cast<uint16_t>(e.epoch));
    StoreBE32(p + 10, static_cast<uint32_t>(last.last_seq));
    StoreBE64(p + 14, static_cast<uint64_t>(last.last_offset.value()));
    StoreBE32(p + 22, static_cast<uint32_t>(offset_delta));
    StoreBE64(p + 26, static_cast<uint64_t>(e.last_timestamp));
    StoreBE32(p + 34, static_cast<uint32_t>(e.coordinator_epoch));
    StoreBE64(p + 38, static_cast<uint64_t>(e.current_txn_first_offset.value()));
    p += kSnapshotEntrySize;
  }
  uint32_t crc = protocol::Crc32c(out.data() + kEntriesOffset, out.size() - kEntriesOffset);
  StoreBE32(out.data() + kCrcOffset, crc);
  return out;
}

Status ProducerStateManager::DecodeSnapshot(ByteView data) {
  if (data.size() < kEntriesOffset + 4) return MakeError(Errc::kCorrupt, "snapshot too short");
  int16_t version = static_cast<int16_t>(LoadBE16(data.data()));
  if (version != kSnapshotVersion) {
    return MakeError(Errc::kCorrupt, fmt::format("snapshot version {}", version));
  }
  uint32_t crc = protocol::Crc32c(data.data() + kEntriesOffset, data.size() - kEntriesOffset);
  if (crc != LoadBE32(data.data() + kCrcOffset)) {
    return MakeError(Errc::kCorrupt, "snapshot CRC mismatch");
  }
  int32_t count = static_cast<int32_t>(LoadBE32(data.data() + kEntriesOffset));
  if (count < 0 || data.size() != kEntriesOffset + 4 + size_t(count) * kSnapshotEntrySize) {
    return MakeError(Errc::kCorrupt, fmt::format("snapshot size does not fit {} entries", count));
  }
  producers_.clear();
  const uint8_t* p = data.data() + kEntriesOffset + 4;
  for (int32_t i = 0; i < count; ++i, p += kSnapshotEntrySize) {
    ProducerEntry e;
    int64_t id = static_cast<int64_t>(LoadBE64(p));
    e.epoch = static_cast<int16_t>(LoadBE16(p + 8));
    int32_t last_seq = static_cast<int32_t>(LoadBE32(p + 10));
    const Offset last_offset(static_cast<int64_t>(LoadBE64(p + 14)));
    int32_t offset_delta = static_cast<int32_t>(LoadBE32(p + 22));
    e.last_timestamp = static_cast<int64_t>(LoadBE64(p + 26));
    e.coordinator_epoch = static_cast<int32_t>(LoadBE32(p + 34));
    e.current_txn_first_offset = Offset(static_cast<int64_t>(LoadBE64(p + 38)));
    if (last_offset >= 0_o) {
      // First sequence = last - delta, wrapping below 0 back to INT32_MAX.
      int64_t first_seq = int64_t(last_seq) - offset_delta;
      if (first_seq < 0) first_seq += int64_t(INT32_MAX) + 1;
      e.batches.push_back({int32_t(first_seq), last_seq, last_offset - offset_delta, last_offset,
                           e.last_timestamp});
    }
    producers_[id] = std::move(e);
  }
  RebuildOpenTxns();
  return Status::Ok();
}

Status ProducerStateManager::WriteSnapshot(const fs::path& dir, Offset offset, Env* env) const {
  return env->WriteFileAtomic(dir / OffsetFileName(offset.value(), kSnapshotSuffix),
                              EncodeSnapshot());
}

std::vector<Offset> ProducerStateManager::ListSnapshots(const fs::path& dir) {
  std::vector<Offset> out;
  std::error_code ec;
  for (const auto& ent : fs::directory_iterator(dir, ec)) {
    if (auto off = ParseOffsetFileName(ent.path().filename().string(), kSnapshotSuffix)) {
      out.push_back(Offset(*off));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::optional<Offset>> ProducerStateManager::LoadNewestSnapshot(const fs::path& dir,
                                                                       Offset max_offset,
                                                                       Env* env) {
  std::vector<Offset> offsets = ListSnapshots(dir);
  for (auto it = offsets.rbegin(); it != offsets.rend(); ++it) {
    if (*it > max_offset) continue;
    fs::path path = dir / OffsetFileName(it->value(), kSnapshotSuffix);
    auto data = env->ReadFile(path);
    if (!data.ok()) return data.take_error();
    Status st = DecodeSnapshot(*data);
    if (st.ok()) return std::optional<Offset>(*it);
    log::Get("storage")->warn("{}: dropping unreadable producer snapshot {}: {}", dir.string(),
                              path.filename().string(), st.error().message);
    STRATA_RETURN_IF_ERROR(env->RemoveFile(path));
  }
  Clear();
  return std::optional<Offset>();
}

Status ProducerStateManager::PruneSnapshots(const fs::path& dir, Offset min_offset,
                                            Offset max_offset, size_t keep, Env* env) {
  std::vector<Offset> offsets = ListSnapshots(dir);
  size_t kept = 0;
  for (auto it = offsets.rbegin(); it != offsets.rend(); ++it) {
    bool in_range = *it >= min_offset && *it <= max_offset;
    if (in_range && kept < keep) {
      ++kept;
      continue;
    }
    STRATA_RETURN_IF_ERROR(env->RemoveFile(dir / OffsetFileName(it->value(), kSnapshotSuffix)));
  }
  return Status::Ok();
}

size_t ProducerStateManager::MergeOlder(const ProducerStateManager& older) {
  size_t taken = 0;
  for (const auto& [id, entry] : older.producers_) {
    if (!producers_.try_emplace(id, entry).second) continue;
    taken++;
    if (entry.current_txn_first_offset >= 0_o) txns_.Start(id, entry.current_txn_first_offset);
  }
  return taken;
}

}  // namespace strata::storage
