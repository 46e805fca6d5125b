#include "cluster/controller.h"

#include <algorithm>
#include <set>
#include <utility>

#include "base/log.h"
#include "base/metrics.h"
#include "cluster/logger.h"
#include "cluster/partition_leadership.h"
#include "cluster/partition_reassignment.h"

namespace strata::cluster {

namespace {

// Records per transaction: each brings one compare and one put, under
// etcd's 128 operations per side.
constexpr size_t kRecordsPerTxn = 100;

metrics::Counter& UncleanElections() {
  static metrics::Counter& c = metrics::Global().GetCounter(
      "strata_unclean_leader_elections_total",
      "leaders elected from outside the ISR by this controller (Kafka's "
      "UncleanLeaderElectionsPerSec)");
  return c;
}

struct Change {
  std::string key;
  Revision mod_revision;
  PartitionRecord record;
};

// A partition going offline, and why: no live in-sync replica, and any live
// replica that could have led but for a gap to remote storage.
void LogOffline(const std::string& topic, int32_t partition, const PartitionRecord& next,
                const std::function<bool(NodeId)>& live) {
  std::vector<NodeId> gapped;
  for (NodeId id : next.replicas) {
    if (live(id) && !RemoteContiguous(next, id)) gapped.push_back(id);
  }
  if (gapped.empty()) {
    ControllerLog()->warn("{}-{}: offline: no live replica may lead (ISR [{}])", topic, partition,
                          JoinIds(next.isr));
    return;
  }
  ControllerLog()->warn(
      "{}-{}: offline: no live in-sync replica, and live replicas [{}] are not contiguous with "
      "remote storage (records between remote storage and their logs would be lost), so none "
      "may lead, not even by unclean election",
      topic, partition, JoinIds(gapped));
}

}  // namespace

Controller::Controller(Metadata& metadata, ControllerElection& election, ControllerOptions options)
    : metadata_(metadata),
      election_(election),
      options_(std::move(options)),
      signal_(metadata.view(), {metadata.keys().BrokersPrefix(), metadata.keys().PartitionsPrefix(),
                                metadata.keys().Controller()}) {
  thread_ = std::thread([this] { Run(); });
}

Controller::~Controller() {
  signal_.Stop();
  thread_.join();
}

void Controller::Run() {
  using Clock = ViewChangeSignal::Clock;
  for (;;) {
    // The election can flip without a view change (the session is fenced
    // locally): look at it every half second, but pass over the partitions
    // only on a change or a new term, not on every tick.
    auto woken = signal_.WaitUntil(Clock::now() + std::chrono::milliseconds(500));
    if (woken.stopping) return;
    bool dirty = woken.changed;
    bool active = election_.active();
    if (!active) {
      was_active_ = false;
      continue;
    }
    const auto now = Clock::now();
    if (!was_active_) {
      known_epochs_.clear();  // a new term: nothing known of earlier epochs
      was_active_ = true;
      DeleteUnfinishedCreations();
      dirty = true;
      next_balance_ = now + options_.leader_imbalance_check_interval;
    }
    // The pass over changes first: a broker back with an empty disk is
    // forgotten by it before any preferred election could count on it.
    if (dirty) {
      bool written = ElectLeaders();
      passes_++;
      if (!written) {
        // A record changed under us (or the store is down): decide again on
        // fresh state, after a pause so a persistent failure does not spin.
        if (signal_.PauseUntil(Clock::now() + std::chrono::milliseconds(200))) return;
        signal_.MarkChanged();
        continue;
      }
    }
    if (options_.auto_leader_rebalance && now >= next_balance_) {
      next_balance_ = now + options_.leader_imbalance_check_interval;
      BalanceLeaders();
    }
  }
}

std::map<NodeId, Revision> Controller::NewLogDirs() const {
  std::map<NodeId, Revision> new_dirs;
  for (const auto& b : metadata_.view().Brokers()) {
    const Revision lost_before = LostDataBefore(b.registration, b.epoch);
    if (lost_before > 0 && EligibleForLeadership(b.registration.state))
      new_dirs[b.registration.node_id] = lost_before;
  }
  return new_dirs;
}

bool Controller::ElectLeaders() {
  MetadataView& view = metadata_.view();
  std::map<NodeId, BrokerEpoch> epochs;
  std::set<NodeId> crashed;  // registered after an unclean shutdown
  for (const auto& b : view.Brokers()) {
    // A broker in controlled shutdown counts as gone: it leaves ISRs and
    // leaderships while it still serves, so its stop interrupts nothing.
    if (EligibleForLeadership(b.registration.state)) epochs[b.registration.node_id] = b.epoch;
    if (!b.registration.clean_shutdown) crashed.insert(b.registration.node_id);
  }
  const std::map<NodeId, Revision> new_dirs = NewLogDirs();
  auto live = [&](NodeId id) { return epochs.contains(id); };
  auto restarted = [&](NodeId id) {
    auto known = known_epochs_.find(id);
    auto now = epochs.find(id);
    return known != known_epochs_.end() && now != epochs.end() && known->second != now->second;
  };
  // Restarted after a crash since it joined the ELR: it may lack records it
  // had not flushed (best effort: a new controller knows no earlier epochs).
  auto lost_unflushed = [&](NodeId id) { return crashed.contains(id) && restarted(id); };
  std::vector<Change> changes;
  int unclean = 0;
  for (const auto& topic : view.Topics()) {
    std::string id = UuidToBase64(topic.record.id);
    const bool allow_unclean = options_.unclean_allowed && options_.unclean_allowed(topic.record);
    const bool tiered = RemoteStorageEnabled(topic.record);
    EligibleLeaderRules elr{
        options_.min_insync_replicas ? options_.min_insync_replicas(topic.record) : 0,
        lost_unflushed};
    for (const auto& [p, entry] : view.Partitions(id)) {
      PartitionRecord current = entry.record;
      const bool forgot =
          ForgetLostReplicas(topic.record.name, p, entry, new_dirs, tiered, current);
      auto next = ElectLeader(current, live, restarted, allow_unclean, elr);
      if (forgot && !next) {
        next = current;
        next->partition_epoch = PartitionEpoch(current.partition_epoch.value() + 1);
      }
      if (auto done = CompleteReassignment(next ? *next : entry.record, live)) {
        ControllerLog()->info("{}-{}: reassignment complete: replicas [{}], leader {}",
                              topic.record.name, p, JoinIds(done->replicas), done->leader.value());
        next = std::move(done);
      }
      if (!next) continue;
      if (IsUncleanElection(entry.record, *next)) {
        unclean++;
        ControllerLog()->warn(
            "{}-{}: unclean leader election: broker {} leads, outside the ISR; records it lacks "
            "are lost (unclean.leader.election.enable)",
            topic.record.name, p, next->leader.value());
      }
      if (next->leader == kNoNode && entry.record.leader != kNoNode) {
        LogOffline(topic.record.name, p, *next, live);
      }
      changes.push_back({metadata_.keys().Partition(id, p), entry.mod_revision, *next});
    }
  }
  bool all_written = true;
  Revision last = 0;
  for (size_t i = 0; i < changes.size(); i += kRecordsPerTxn) {
    std::vector<KvCompare> compares{election_.Fence()};
    std::vector<KvOp> ops;
    for (size_t j = i; j < std::min(changes.size(), i + kRecordsPerTxn); ++j) {
      compares.push_back(KvCompare::ModRevisionIs(changes[j].key, changes[j].mod_revision));
      ops.push_back(KvOp::Put(changes[j].key, EncodePartition(changes[j].record)));
    }
    auto r = metadata_.kv().Txn(compares, ops);
    if (!r.ok()) {
      ControllerLog()->warn("electing leaders: {}", r.error().message);
      return false;
    }
    if (!r->succeeded) {
      all_written = false;
      continue;
    }
    last = r->revision;
    leader_changes_ += static_cast<int64_t>(ops.size());
  }
  if (unclean > 0 && all_written) UncleanElections().Add(unclean);
  if (!changes.empty()) {
    int offline = 0;
    for (const auto& c : changes) offline += c.record.leader == kNoNode ? 1 : 0;
    ControllerLog()->info(
        "new leaders or ISRs for {} partitions ({} without a live in-sync replica)", changes.size(),
        offline);
  }
  if (last != 0) view.WaitForRevision(last, std::chrono::seconds(5));
  if (all_written) known_epochs_ = std::move(epochs);
  return all_written;
}

bool Controller::ForgetLostReplicas(const std::string& topic, int32_t partition,
                                    const PartitionEntry& entry,
                                    const std::map<NodeId, Revision>& new_dirs, bool tiered,
                                    PartitionRecord& record) {
  bool changed = false;
  for (const auto& [id, lost_before] : new_dirs) {
    // Marked as forgotten, so that the leader taking the rebuilt replica
    // back later is not undone.
    if (!CountsOnLostData(record, entry.create_revision, id, lost_before, tiered)) continue;
    ForgetLostReplica(record, id, tiered);
    record.forgot_lost_data[id] = lost_before;
    changed = true;
    ControllerLog()->warn(
        "{}-{}: broker {} came back with an empty log directory: it leaves the ISR, the eligible "
        "leaders and the leadership, and may not lead until its leader sees its log rebuilt",
        topic, partition, id.value());
  }
  return changed;
}

void Controller::DeleteUnfinishedCreations() {
  // Metadata::CreateTopic writes a new topic's partition records before its
  // topic record; a controller that died or was deposed in between left
  // records nobody reads. Only records older than this term qualify: this
  // controller's own creations start after its election.
  MetadataView& view = metadata_.view();
  const Revision term = election_.election_revision();
  if (!view.WaitForRevision(term, std::chrono::seconds(5))) return;
  // From the stored topic records, not the view's decoded ones: the view
  // leaves out a record it cannot read, and its topic's partitions are not
  // orphans. With any topic record unreadable, nothing is deleted.
  std::set<std::string> named;
  for (const auto& kv : view.RawPrefix(metadata_.keys().TopicsPrefix())) {
    auto topic = DecodeTopic(kv.value);
    if (!topic.ok()) {
      ControllerLog()->warn(
          "not looking for unfinished topic creations: topic record {} is unreadable ({})", kv.key,
          topic.error().message);
      return;
    }
    named.insert(UuidToBase64(topic->id));
  }
  for (const std::string& id : view.PartitionTopicIds()) {
    if (named.contains(id)) continue;
    auto partitions = view.Partitions(id);
    if (partitions.empty() || std::any_of(partitions.begin(), partitions.end(), [&](const auto& p) {
          return p.second.mod_revision >= term;
        })) {
      continue;
    }
    KvCompare fence = election_.Fence();
    KvOp drop = KvOp::DeletePrefix(metadata_.keys().TopicPartitions(id));
    auto r = metadata_.kv().Txn(std::span(&fence, 1), std::span(&drop, 1));
    if (!r.ok() || !r->succeeded) {
      ControllerLog()->warn("deleting the partition records of unfinished topic creation {}: {}",
                            id, r.ok() ? "no longer the controller" : r.error().message);
      return;
    }
    ControllerLog()->warn(
        "deleted {} partition records of topic id {}, which has no topic record (a creation "
        "that did not finish)",
        partitions.size(), id);
  }
}

int64_t Controller::OfflinePartitions() const {
  MetadataView& view = metadata_.view();
  std::set<NodeId> registered;
  for (const auto& b : view.Brokers()) registered.insert(b.registration.node_id);
  int64_t offline = 0;
  for (const auto& topic : view.Topics()) {
    for (const auto& [p, entry] : view.Partitions(UuidToBase64(topic.record.id))) {
      if (!registered.contains(entry.record.leader)) offline++;
    }
  }
  return offline;
}

}  // namespace strata::cluster
