#include "coordinator/txn_coordinator.h"

#include <fmt/format.h>

#include <algorithm>

#include "coordinator/key_partitioner.h"
#include "coordinator/logger.h"
#include "coordinator/txn_log.h"

namespace strata::coordinator {

namespace {

using protocol::ErrorCode;

// Committing or aborting: the markers are being written.
bool Completing(TxnStatus s) {
  return s == TxnStatus::kPrepareCommit || s == TxnStatus::kPrepareAbort;
}

// A transaction is open: its records may be in its partitions' logs,
// undecided.
bool IsOpen(TxnStatus s) { return s == TxnStatus::kOngoing || Completing(s); }

// Kafka's appendTransactionToLog error mapping: a lost leadership sends the
// client to the new coordinator, anything else is retried here.
ErrorCode AppendError(Errc errc) {
  return errc == Errc::kFenced || errc == Errc::kNotFound ? ErrorCode::kNotCoordinator
                                                          : ErrorCode::kCoordinatorNotAvailable;
}

// Kafka's listTransactionStates.shouldInclude, in its order.
bool PassesFilter(const TxnListFilter& filter, const TxnListing& listing, int64_t start_ms,
                  int64_t now_ms) {
  if (listing.state == TxnStatus::kDead) return false;  // being expired
  if (!filter.producer_ids.empty() && !filter.producer_ids.contains(listing.producer_id)) {
    return false;
  }
  if (filter.states && !filter.states->contains(listing.state)) return false;
  if (filter.min_duration_ms >= 0 && now_ms - start_ms <= filter.min_duration_ms) return false;
  return !filter.id_matches || filter.id_matches(listing.transactional_id);
}

}  // namespace

TxnCoordinator::TxnCoordinator(TxnCoordinatorConfig config, std::unique_ptr<CoordinatorLog> log,
                               ProducerIdSource new_producer_id, Clock* clock)
    : config_(config),
      log_(std::move(log)),
      new_producer_id_(std::move(new_producer_id)),
      clock_(clock) {}

int32_t TxnCoordinator::PartitionFor(const std::string& transactional_id) const {
  return PartitionForKey(transactional_id, log_->partitions());
}

Result<std::vector<std::string>> TxnCoordinator::LoadPartition(int32_t p,
                                                               int32_t coordinator_epoch) {
  {
    std::lock_guard lock(mu_);
    partitions_[p] = Partition{Partition::State::kLoading, coordinator_epoch};
  }
  auto loaded = LoadTxnPartition(*log_, p);
  std::lock_guard lock(mu_);
  auto part = partitions_.find(p);
  if (part == partitions_.end() || part->second.coordinator_epoch != coordinator_epoch) {
    return MakeError(Errc::kFenced, fmt::format("{}-{} moved while loading", log_->topic(), p));
  }
  if (!loaded.ok()) {
    partitions_.erase(part);
    return loaded.take_error();
  }
  std::vector<std::string> committing;
  for (auto& [id, value] : loaded->transactions) {
    auto entry = std::make_shared<Entry>(TxnMetadata::FromLogValue(id, value));
    entry->partition = p;
    if (Completing(entry->md.state())) {
      // Its markers may not all have been written: the caller writes them
      // again, then the end. Not yet shared: no lock needed.
      TxnOutcome out = entry->md.PrepareComplete(Now());
      if (out.step == TxnStep::kWrite) entry->completion = out.transit;
      committing.push_back(id);
    }
    ids_[id] = std::move(entry);
  }
  part->second.state = Partition::State::kLoaded;
  Log()->info("{}-{}: loaded {} transactional ids at coordinator epoch {} ({} committing)",
              log_->topic(), p, loaded->transactions.size(), coordinator_epoch, committing.size());
  return committing;
}

void TxnCoordinator::UnloadPartition(int32_t p) {
  std::lock_guard lock(mu_);
  if (partitions_.erase(p) == 0) return;
  std::erase_if(ids_, [p](const auto& item) { return item.second->partition == p; });
}

ErrorCode TxnCoordinator::Serves(const std::string& transactional_id) const {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(PartitionFor(transactional_id));
  if (it == partitions_.end()) return ErrorCode::kNotCoordinator;
  return it->second.state == Partition::State::kLoaded ? ErrorCode::kNone
                                                       : ErrorCode::kCoordinatorLoadInProgress;
}

std::optional<int32_t> TxnCoordinator::CoordinatorEpoch(int32_t p) const { return LoadedEpoch(p); }

std::optional<int32_t> TxnCoordinator::LoadedEpoch(int32_t p) const {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(p);
  if (it == partitions_.end() || it->second.state != Partition::State::kLoaded) return std::nullopt;
  return it->second.coordinator_epoch;
}

std::shared_ptr<TxnCoordinator::Entry> TxnCoordinator::Find(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = ids_.find(id);
  return it == ids_.end() ? nullptr : it->second;
}

TxnCoordinator::Entries TxnCoordinator::LoadedEntries() const {
  Entries out;
  std::lock_guard lock(mu_);
  for (const auto& [id, entry] : ids_) {
    auto part = partitions_.find(entry->partition);
    if (part != partitions_.end() && part->second.state == Partition::State::kLoaded) {
      out.emplace_back(id, entry);
    }
  }
  return out;
}

TxnReply TxnCoordinator::Write(const std::string& id, Entry& entry, const TxnTransit& transit) {
  const std::optional<int32_t> epoch = LoadedEpoch(entry.partition);
  if (!epoch) {
    entry.md.AbortPending();
    return TxnReply{.error = ErrorCode::kNotCoordinator};
  }
  std::optional<TxnLogValue> value;
  if (transit.state != TxnStatus::kDead) value = transit.ToLogValue();
  Status st = AppendTxnRecord(*log_, entry.partition, id, value, config_.value_version);
  auto appended = log_->LastAppended(entry.partition);
  if (!st.ok() || !appended) {
    entry.md.AbortPending();
    const Errc errc = st.ok() ? Errc::kUnavailable : st.error().code;
    Log()->warn("{}: writing {} failed: {}", id, TxnStatusName(transit.state),
                st.ok() ? "no append recorded" : st.error().message);
    return TxnReply{.error = AppendError(errc)};
  }
  return TxnReply{.write = TxnWrite{id, entry.partition, *epoch, transit, *appended}};
}

TxnReply TxnCoordinator::Apply(const std::string& id, Entry& entry, TxnOutcome outcome,
                               ErrorCode after_write) {
  if (outcome.step != TxnStep::kWrite) {
    return TxnReply{outcome.error, outcome.producer_id, outcome.producer_epoch, std::nullopt};
  }
  TxnReply reply = Write(id, entry, outcome.transit);
  if (reply.write) reply.error = after_write;
  return reply;
}

TxnReply TxnCoordinator::FenceThenAbort(const std::string& id, Entry& entry,
                                        const TxnOutcome& fence) {
  // Kafka fences the producer's epoch and aborts its open transaction as the
  // coordinator; the client is told to retry, and its retry finds the abort
  // done (or in progress).
  EndTxnArgs args{.producer_id = fence.transit.producer_id,
                  .producer_epoch = fence.transit.producer_epoch,
                  .result = TxnResult::kAbort,
                  .from_client = false,
                  .transaction_version = entry.md.client_transaction_version(),
                  .now_ms = Now()};
  TxnOutcome abort = entry.md.EndTxn(args);
  if (abort.step == TxnStep::kNeedProducerId) {
    auto pid = new_producer_id_();
    if (!pid.ok()) {
      entry.md.AbortPending();
      return TxnReply{.error = ErrorCode::kCoordinatorNotAvailable};
    }
    args.fresh_producer_id = *pid;
    abort = entry.md.EndTxn(args);
  }
  if (abort.step != TxnStep::kWrite) {
    entry.md.AbortPending();
    return TxnReply{.error = abort.error != ErrorCode::kNone ? abort.error
                                                             : ErrorCode::kConcurrentTransactions};
  }
  return Apply(id, entry, std::move(abort), ErrorCode::kConcurrentTransactions);
}

TxnReply TxnCoordinator::InitProducerId(const std::string& transactional_id, int32_t timeout_ms,
                                        std::optional<ProducerIdAndEpoch> expected) {
  if (timeout_ms <= 0 || timeout_ms > config_.max_timeout_ms) {
    return TxnReply{.error = ErrorCode::kInvalidTransactionTimeout};
  }
  if (ErrorCode served = Serves(transactional_id); served != ErrorCode::kNone) {
    return TxnReply{.error = served};
  }
  std::shared_ptr<Entry> entry = Find(transactional_id);
  if (!entry) {
    auto pid = new_producer_id_();
    if (!pid.ok()) return TxnReply{.error = ErrorCode::kCoordinatorNotAvailable};
    auto made =
        std::make_shared<Entry>(TxnMetadata::New(transactional_id, *pid, timeout_ms, Now()));
    made->partition = PartitionFor(transactional_id);
    std::lock_guard lock(mu_);
    entry = ids_.emplace(transactional_id, std::move(made)).first->second;  // put if absent
  }
  std::lock_guard lock(entry->mu);
  TxnOutcome out = entry->md.InitProducerId(timeout_ms, expected, Now());
  if (out.step == TxnStep::kNeedProducerId) {
    auto pid = new_producer_id_();
    if (!pid.ok()) return TxnReply{.error = ErrorCode::kCoordinatorNotAvailable};
    out = entry->md.InitProducerId(timeout_ms, expected, Now(), *pid);
  }
  if (out.step == TxnStep::kAbortAfterFence) return FenceThenAbort(transactional_id, *entry, out);
  const int64_t pid = out.transit.producer_id;
  const int16_t epoch = out.transit.producer_epoch;
  TxnReply reply = Apply(transactional_id, *entry, std::move(out), ErrorCode::kNone);
  if (reply.write) {
    reply.producer_id = pid;
    reply.producer_epoch = epoch;
  }
  return reply;
}

TxnReply TxnCoordinator::AddPartitions(const std::string& transactional_id, int64_t producer_id,
                                       int16_t producer_epoch,
                                       const std::set<TopicPartition>& partitions,
                                       int16_t client_transaction_version) {
  if (ErrorCode served = Serves(transactional_id); served != ErrorCode::kNone) {
    return TxnReply{.error = served};
  }
  std::shared_ptr<Entry> entry = Find(transactional_id);
  if (!entry) return TxnReply{.error = ErrorCode::kInvalidProducerIdMapping};
  std::lock_guard lock(entry->mu);
  return Apply(transactional_id, *entry,
               entry->md.AddPartitions(producer_id, producer_epoch, partitions,
                                       client_transaction_version, Now()),
               ErrorCode::kNone);
}

std::map<TopicPartition, ErrorCode> TxnCoordinator::VerifyPartitions(
    const std::string& transactional_id, int64_t producer_id, int16_t producer_epoch,
    const std::set<TopicPartition>& partitions) const {
  auto all = [&](ErrorCode code) {
    std::map<TopicPartition, ErrorCode> out;
    for (const auto& tp : partitions) out[tp] = code;
    return out;
  };
  if (ErrorCode served = Serves(transactional_id); served != ErrorCode::kNone) return all(served);
  std::shared_ptr<Entry> entry = Find(transactional_id);
  if (!entry) return all(ErrorCode::kInvalidProducerIdMapping);
  std::lock_guard lock(entry->mu);
  return entry->md.VerifyPartitions(producer_id, producer_epoch, partitions);
}

TxnReply TxnCoordinator::EndTxn(const std::string& transactional_id, int64_t producer_id,
                                int16_t producer_epoch, TxnResult result,
                                int16_t client_transaction_version) {
  if (ErrorCode served = Serves(transactional_id); served != ErrorCode::kNone) {
    return TxnReply{.error = served};
  }
  std::shared_ptr<Entry> entry = Find(transactional_id);
  if (!entry) return TxnReply{.error = ErrorCode::kInvalidProducerIdMapping};
  std::lock_guard lock(entry->mu);
  EndTxnArgs args{.producer_id = producer_id,
                  .producer_epoch = producer_epoch,
                  .result = result,
                  .transaction_version = client_transaction_version,
                  .now_ms = Now()};
  TxnOutcome out = entry->md.EndTxn(args);
  if (out.step == TxnStep::kNeedProducerId) {
    auto pid = new_producer_id_();
    if (!pid.ok()) return TxnReply{.error = ErrorCode::kCoordinatorNotAvailable};
    args.fresh_producer_id = *pid;
    out = entry->md.EndTxn(args);
  }
  // The identity the producer continues with (transaction version 2 bumps
  // it at every end; past the last epoch it moves to the next producer id).
  const bool next_id = out.transit.next_producer_id != kNoProducerId;
  const int64_t pid = next_id ? out.transit.next_producer_id : out.transit.producer_id;
  const int16_t epoch = next_id ? int16_t{0} : out.transit.producer_epoch;
  TxnReply reply = Apply(transactional_id, *entry, std::move(out), ErrorCode::kNone);
  if (reply.write) {
    reply.producer_id = pid;
    reply.producer_epoch = epoch;
  }
  return reply;
}

ErrorCode TxnCoordinator::Finish(const TxnWrite& write, bool committed) {
  std::shared_ptr<Entry> entry = Find(write.transactional_id);
  if (!entry || LoadedEpoch(write.partition) != write.coordinator_epoch) {
    return ErrorCode::kNotCoordinator;  // the next coordinator loads what was committed
  }
  std::lock_guard lock(entry->mu);
  if (!committed) {
    entry->md.AbortPending();
    if (write.transit == entry->completion) entry->completion.reset();
    return ErrorCode::kCoordinatorNotAvailable;
  }
  if (write.transit.state == TxnStatus::kDead) return RemoveExpired(write, entry);
  Status st = entry->md.Complete(write.transit);
  if (!st.ok()) {
    Log()->error("{}: a committed {} was refused: {}", write.transactional_id,
                 TxnStatusName(write.transit.state), st.error().message);
    return ErrorCode::kUnknownServerError;
  }
  if (write.transit == entry->completion) entry->completion.reset();
  if (write.transit.state == TxnStatus::kCompleteCommit) committed_.fetch_add(1);
  if (write.transit.state == TxnStatus::kCompleteAbort) aborted_.fetch_add(1);
  if (Completing(write.transit.state)) {
    // Held in PrepareX, with its end prepared, until the markers are written.
    TxnOutcome out = entry->md.PrepareComplete(Now());
    if (out.step == TxnStep::kWrite) entry->completion = out.transit;
  }
  return ErrorCode::kNone;
}

ErrorCode TxnCoordinator::RemoveExpired(const TxnWrite& write,
                                        const std::shared_ptr<Entry>& entry) {
  // Kafka's removeFromCacheCallback: still pending Dead at the epoch the
  // tombstone was written at, else the id was used meanwhile and stays.
  if (!entry->md.ReadyToRemove(write.transit)) {
    Log()->warn("{}: expired but not removed: used meanwhile (epoch {}, tombstone's {})",
                write.transactional_id, entry->md.producer_epoch(), write.transit.producer_epoch);
    if (entry->md.pending() == TxnStatus::kDead) entry->md.AbortPending();
    return ErrorCode::kConcurrentTransactions;
  }
  // The entry stays pending Dead: a request that found it before it left
  // is answered CONCURRENT_TRANSACTIONS, and its retry finds no id.
  std::lock_guard lock(mu_);
  auto it = ids_.find(write.transactional_id);
  if (it != ids_.end() && it->second == entry) ids_.erase(it);
  Log()->debug("{}: expired and removed", write.transactional_id);
  return ErrorCode::kNone;
}

std::vector<TxnReply> TxnCoordinator::AbortTimedOut() {
  std::vector<TxnReply> aborts;
  const int64_t now = Now();
  for (auto& [id, entry] : LoadedEntries()) {
    std::lock_guard lock(entry->mu);
    if (!entry->md.TimedOut(now)) continue;
    Log()->info("{}: aborting the transaction of producer {} epoch {}, open past its {} ms timeout",
                id, entry->md.producer_id(), entry->md.producer_epoch(), entry->md.timeout_ms());
    TxnOutcome fence = entry->md.PrepareFence();
    if (fence.step != TxnStep::kAbortAfterFence) continue;
    TxnReply reply = FenceThenAbort(id, *entry, fence);
    if (reply.write) {
      reply.error = ErrorCode::kNone;
      aborts.push_back(std::move(reply));
    }
  }
  return aborts;
}

std::vector<TxnReply> TxnCoordinator::ExpireIds(int64_t expiration_ms) {
  std::vector<TxnReply> tombstones;
  const int64_t now = Now();
  for (auto& [id, entry] : LoadedEntries()) {
    std::lock_guard lock(entry->mu);
    if (!entry->md.Expired(now, expiration_ms)) continue;
    TxnOutcome dead = entry->md.PrepareDead();
    if (dead.step != TxnStep::kWrite) continue;
    TxnReply reply = Write(id, *entry, dead.transit);  // a tombstone
    if (reply.write) tombstones.push_back(std::move(reply));
  }
  if (!tombstones.empty()) {
    Log()->info("expiring {} transactional ids unused for {} ms", tombstones.size(), expiration_ms);
  }
  return tombstones;
}

std::optional<TxnMarkers> TxnCoordinator::Markers(const std::string& transactional_id) const {
  std::shared_ptr<Entry> entry = Find(transactional_id);
  if (!entry) return std::nullopt;
  std::lock_guard lock(entry->mu);
  return entry->md.MarkersToSend();
}

bool TxnCoordinator::MarkerWritten(const std::string& transactional_id, const TopicPartition& tp,
                                   const TxnMarkers& sent, int32_t coordinator_epoch) {
  std::shared_ptr<Entry> entry = Find(transactional_id);
  if (!entry || LoadedEpoch(entry->partition) != coordinator_epoch) return false;
  std::lock_guard lock(entry->mu);
  auto ending = entry->md.MarkersToSend();
  if (!ending || ending->producer_id != sent.producer_id ||
      ending->producer_epoch != sent.producer_epoch || ending->result != sent.result) {
    return false;
  }
  entry->md.RemovePartition(tp);
  auto left = entry->md.MarkersToSend();
  return left && left->partitions.empty();
}

std::optional<TxnWrite> TxnCoordinator::CompleteTransaction(const std::string& transactional_id) {
  std::shared_ptr<Entry> entry = Find(transactional_id);
  if (!entry) return std::nullopt;
  std::lock_guard lock(entry->mu);
  auto left = entry->md.MarkersToSend();
  if (!left || !left->partitions.empty()) return std::nullopt;
  if (!entry->completion && !entry->md.pending()) {
    TxnOutcome out = entry->md.PrepareComplete(Now());  // after a failed end write
    if (out.step == TxnStep::kWrite) entry->completion = out.transit;
  }
  if (!entry->completion) return std::nullopt;
  TxnReply reply = Write(transactional_id, *entry, *entry->completion);
  if (!reply.write) entry->completion.reset();
  return reply.write;
}

std::optional<TxnTransit> TxnCoordinator::Describe(const std::string& transactional_id) const {
  std::shared_ptr<Entry> entry = Find(transactional_id);
  if (!entry) return std::nullopt;
  std::lock_guard lock(entry->mu);
  return entry->md.Current();
}

TxnStats TxnCoordinator::Stats() const {
  TxnStats stats{.committed = committed_.load(), .aborted = aborted_.load()};
  for (const auto& [id, entry] : LoadedEntries()) {
    std::lock_guard lock(entry->mu);
    if (!IsOpen(entry->md.state())) continue;
    ++stats.open;
    const int64_t start = entry->md.start_ms();
    if (stats.oldest_open_start_ms < 0 || start < stats.oldest_open_start_ms) {
      stats.oldest_open_start_ms = start;
    }
  }
  return stats;
}

TxnList TxnCoordinator::List(const TxnListFilter& filter) const {
  std::vector<std::pair<std::string, std::shared_ptr<Entry>>> candidates;
  {
    std::lock_guard lock(mu_);
    for (const auto& [p, part] : partitions_) {
      if (part.state == Partition::State::kLoading) {
        return TxnList{.error = ErrorCode::kCoordinatorLoadInProgress};
      }
    }
    for (const auto& [id, entry] : ids_) {
      // An id made by an InitProducerId racing an unload may outlive its
      // partition here for a moment; it is not this coordinator's.
      if (partitions_.contains(entry->partition)) candidates.emplace_back(id, entry);
    }
  }
  TxnList out;
  const int64_t now = Now();
  for (const auto& [id, entry] : candidates) {
    TxnListing listing{.transactional_id = id};
    int64_t start_ms = -1;
    {
      std::lock_guard lock(entry->mu);
      listing.producer_id = entry->md.producer_id();
      listing.state = entry->md.state();
      start_ms = entry->md.start_ms();
    }
    if (PassesFilter(filter, listing, start_ms, now)) {
      out.transactions.push_back(std::move(listing));
    }
  }
  std::sort(out.transactions.begin(), out.transactions.end(),
            [](const TxnListing& a, const TxnListing& b) {
              return a.transactional_id < b.transactional_id;
            });
  return out;
}

}  // namespace strata::coordinator
