#include "cluster/partition_leadership.h"

#include <algorithm>
#include <iterator>
#include <map>

namespace strata::cluster {

namespace {

// The first live replica in replica order, or kNoNode.
NodeId FirstLive(const PartitionRecord& current, const std::function<bool(NodeId)>& live) {
  for (NodeId id : current.replicas) {
    if (live(id)) return id;
  }
  return kNoNode;
}

bool Has(const std::vector<NodeId>& ids, NodeId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

bool IsUncleanElection(const PartitionRecord& current, const PartitionRecord& next) {
  return next.leader != kNoNode && next.leader != current.leader &&
         !Has(current.isr, next.leader) && !Has(current.elr, next.leader);
}

void UpdateEligibleLeaders(const PartitionRecord& before, PartitionRecord& after,
                           const EligibleLeaderRules& rules) {
  const int min_isr =
      std::min<int>(rules.min_insync_replicas, static_cast<int>(after.replicas.size()));
  if (rules.min_insync_replicas <= 0 || static_cast<int>(after.isr.size()) >= min_isr ||
      IsUncleanElection(before, after)) {
    after.elr.clear();
    after.last_known_elr.clear();
    return;
  }
  std::vector<NodeId> elr;
  for (NodeId id : after.replicas) {  // in replica order
    bool was = Has(before.elr, id) || Has(before.isr, id);
    bool lost = rules.lost_unflushed && rules.lost_unflushed(id);
    // A replica with a gap to remote storage (a broker back with an empty
    // disk stays listed in a one-member ISR) has no claim to the records.
    if (was && !lost && !Has(after.isr, id) && RemoteContiguous(after, id)) elr.push_back(id);
  }
  after.elr = std::move(elr);
}

std::optional<PartitionRecord> ElectLeader(const PartitionRecord& current,
                                           const std::function<bool(NodeId)>& live,
                                           const std::function<bool(NodeId)>& restarted,
                                           bool allow_unclean, const EligibleLeaderRules& elr) {
  auto alive = [&](NodeId id) { return live(id) && !restarted(id); };
  // Only a replica whose log joins up with remote storage may lead: one
  // with a gap would serve (and upload) a log missing the gap's records.
  auto electable = [&](NodeId id) { return live(id) && RemoteContiguous(current, id); };
  // Gone or restarted brokers leave the ISR (a restarted one rejoins as a
  // follower that caught up), as Kafka's controller removes a fenced
  // broker; with no member left the ISR stays as it was, so the partition
  // comes back only with a replica that has every acknowledged record.
  std::vector<NodeId> isr;
  std::copy_if(current.isr.begin(), current.isr.end(), std::back_inserter(isr), alive);
  if (isr.empty()) isr = current.isr;
  bool leader_ok = current.leader != kNoNode && alive(current.leader);
  NodeId next = current.leader;
  if (!leader_ok) {
    // The first live ISR member in replica order: the preferred leader
    // when it is back.
    next = kNoNode;
    for (NodeId id : current.replicas) {
      if (std::find(isr.begin(), isr.end(), id) != isr.end() && electable(id)) {
        next = id;
        break;
      }
    }
  }
  if (next == kNoNode && elr.min_insync_replicas > 0) {
    // No live ISR member: an eligible leader replica has every committed
    // record (KIP-966), unless it lost unflushed ones in a crash.
    for (NodeId id : current.replicas) {
      if (Has(current.elr, id) && electable(id) &&
          !(elr.lost_unflushed && elr.lost_unflushed(id))) {
        next = id;
        isr = {next};
        break;
      }
    }
  }
  if (next == kNoNode && allow_unclean) {
    next = FirstLive(current, electable);
    if (next != kNoNode) isr = {next};
  }
  PartitionRecord out = current;
  out.isr = std::move(isr);
  if (!leader_ok) {
    out.leader = next;
    // A new leader, or the same one restarted, leads at a new epoch; an
    // offline partition that stays offline keeps its epoch.
    if (next != kNoNode || current.leader != kNoNode)
      out.leader_epoch = LeaderEpoch(current.leader_epoch.value() + 1);
  }
  UpdateEligibleLeaders(current, out, elr);
  if (out.leader == current.leader && out.leader_epoch == current.leader_epoch &&
      out.isr == current.isr && out.elr == current.elr &&
      out.last_known_elr == current.last_known_elr) {
    return std::nullopt;  // nothing changed (a live leader, or still offline)
  }
  out.partition_epoch = PartitionEpoch(current.partition_epoch.value() + 1);
  return out;
}

bool ForgetsLostReplica(const PartitionRecord& p, NodeId id, bool tiered) {
  const bool counts_on =
      p.leader == id || Has(p.isr, id) || Has(p.elr, id) || Has(p.last_known_elr, id);
  return Has(p.replicas, id) && counts_on && (tiered || p.replicas.size() > 1);
}

bool CountsOnLostData(const PartitionRecord& p, int64_t created, NodeId id, int64_t lost_before,
                      bool tiered) {
  if (created >= lost_before) return false;
  auto forgot = p.forgot_lost_data.find(id);
  if (forgot != p.forgot_lost_data.end() && forgot->second >= lost_before) return false;
  return ForgetsLostReplica(p, id, tiered);
}

bool ForgetLostReplica(PartitionRecord& p, NodeId id, bool tiered) {
  if (!ForgetsLostReplica(p, id, tiered)) return false;
  auto drop = [id](std::vector<NodeId>& ids) { std::erase(ids, id); };
  if (p.isr.size() > 1) drop(p.isr);
  drop(p.elr);
  drop(p.last_known_elr);
  if (!Has(p.non_contiguous, id)) p.non_contiguous.push_back(id);
  if (p.leader == id) {
    p.leader = kNoNode;
    p.leader_epoch = LeaderEpoch(p.leader_epoch.value() + 1);
  }
  return true;
}

RequestedElection ElectRequested(ElectionType type, const PartitionRecord& current,
                                 const std::function<bool(NodeId)>& live_broker) {
  // A replica with a gap to remote storage never leads (see ElectLeader).
  auto live = [&](NodeId id) { return live_broker(id) && RemoteContiguous(current, id); };
  auto in_isr = [&](NodeId id) {
    return std::find(current.isr.begin(), current.isr.end(), id) != current.isr.end();
  };
  NodeId next = kNoNode;
  if (type == ElectionType::kPreferred) {
    if (current.replicas.empty()) return {ElectionOutcome::kPreferredNotAvailable, current};
    const NodeId preferred = current.replicas.front();
    if (current.leader == preferred && live_broker(preferred))
      return {ElectionOutcome::kNotNeeded, current};
    if (!live(preferred) || !in_isr(preferred)) {
      return {ElectionOutcome::kPreferredNotAvailable, current};
    }
    next = preferred;
  } else {
    if (current.leader != kNoNode && live_broker(current.leader)) {
      return {ElectionOutcome::kNotNeeded, current};
    }
    for (NodeId id : current.replicas) {
      if (in_isr(id) && live(id)) {
        next = id;
        break;
      }
    }
    for (NodeId id : current.replicas) {  // then an eligible leader replica (KIP-966)
      if (next == kNoNode && Has(current.elr, id) && live(id)) next = id;
    }
    if (next == kNoNode) next = FirstLive(current, live);
    if (next == kNoNode) return {ElectionOutcome::kEligibleNotAvailable, current};
  }
  PartitionRecord out = current;
  if (!in_isr(next)) out.isr = {next};
  if (Has(current.elr, next)) {
    // From the ELR: the others (and the old ISR) stay eligible.
    out.elr.clear();
    for (NodeId id : current.replicas) {
      if (id != next && (Has(current.elr, id) || in_isr(id)) && RemoteContiguous(current, id))
        out.elr.push_back(id);
    }
  } else if (!in_isr(next)) {  // unclean: nobody else is known to be complete
    out.elr.clear();
    out.last_known_elr.clear();
  }
  out.leader = next;
  out.leader_epoch = LeaderEpoch(current.leader_epoch.value() + 1);
  out.partition_epoch = PartitionEpoch(current.partition_epoch.value() + 1);
  return {ElectionOutcome::kElected, out};
}

std::vector<size_t> PartitionsToRebalance(std::span<const PartitionRecord* const> partitions,
                                          const std::function<bool(NodeId)>& live,
                                          int imbalance_percent) {
  struct Preferred {
    int64_t total = 0;
    int64_t led_by_another = 0;
  };
  std::map<NodeId, Preferred> by_broker;
  for (const PartitionRecord* p : partitions) {
    if (p->replicas.empty()) continue;
    Preferred& b = by_broker[p->replicas.front()];
    b.total++;
    if (p->leader != p->replicas.front()) b.led_by_another++;
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < partitions.size(); ++i) {
    const PartitionRecord& p = *partitions[i];
    if (p.replicas.empty() || p.leader == p.replicas.front()) continue;
    const Preferred& b = by_broker[p.replicas.front()];
    // Integer form of Kafka's led_by_another / total > percent / 100.
    if (b.led_by_another * 100 <= b.total * imbalance_percent) continue;
    if (ElectRequested(ElectionType::kPreferred, p, live).outcome == ElectionOutcome::kElected)
      out.push_back(i);
  }
  return out;
}

}  // namespace strata::cluster
