// Broker::ControlledShutdown: the broker's half of Kafka's controlled
// shutdown. The registration goes to state "controlled_shutdown"; the
// controller then treats the broker as gone for leadership (it leaves every
// ISR it shares with another live broker, and its leaderships move to live
// ISR members), while it still serves. Producers see NOT_LEADER_OR_FOLLOWER
// (retriable) and find the new leader; no acks=all write waits on it.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

#include "server/broker.h"
#include "server/logger.h"

namespace strata::server {

namespace {

// This broker's partitions where it leads or is in the ISR although another
// live, eligible ISR member could take its place: what the controller has
// still to move. Only the replicas hosted here are looked at.
int PartitionsToMove(cluster::MetadataView& view, const broker::TopicManager& topics,
                     cluster::NodeId self) {
  const std::set<cluster::NodeId> eligible = view.BrokersEligibleForLeadership();
  int out = 0;
  for (const auto& local : topics.LocalPartitions()) {
    auto entry = view.Partition(local->topic_id(), local->tp().partition);
    if (!entry) continue;
    const auto& isr = entry->record.isr;
    bool mine =
        entry->record.leader == self || std::find(isr.begin(), isr.end(), self) != isr.end();
    if (!mine) continue;
    bool other = std::any_of(isr.begin(), isr.end(),
                             [&](cluster::NodeId r) { return r != self && eligible.contains(r); });
    if (other) out++;
  }
  return out;
}

}  // namespace

void Broker::ControlledShutdown() {
  if (!session_ || !metadata_ || !config_.GetBool("controlled.shutdown.enable")) return;
  const cluster::NodeId self(config_.node_id());
  const auto start = std::chrono::steady_clock::now();
  cluster::MetadataView& view = metadata_->view();
  const int before = PartitionsToMove(view, *topics_, self);
  if (before == 0) return;  // nothing another broker could take over
  Status st = session_->EnterControlledShutdown();
  if (!st.ok()) {
    Log()->warn("controlled shutdown: cannot announce it ({}); stopping without it",
                st.error().message);
    return;
  }
  Log()->info("controlled shutdown: moving {} partitions' leadership and ISR membership", before);
  const auto deadline =
      start + std::chrono::milliseconds(config_.GetLong("strata.etcd.lease.ttl.ms"));
  // Looked at again on each change of the view, not on a timer.
  std::mutex mu;
  std::condition_variable changed;
  uint64_t changes = 0;
  const int subscription = view.Subscribe([&](const std::vector<std::string>&, bool) {
    std::lock_guard lock(mu);
    ++changes;
    changed.notify_one();
  });
  int left = before;
  for (;;) {
    uint64_t seen = 0;
    {
      std::lock_guard lock(mu);
      seen = changes;
    }
    left = PartitionsToMove(view, *topics_, self);
    if (left == 0 || std::chrono::steady_clock::now() >= deadline) break;
    std::unique_lock lock(mu);
    changed.wait_until(lock, deadline, [&] { return changes != seen; });
  }
  view.Unsubscribe(subscription);  // waits for a listener call in flight
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  if (left > 0) {
    Log()->warn("controlled shutdown: {} partitions not moved after {} ms; stopping anyway", left,
                ms);
  } else {
    Log()->info("controlled shutdown: done in {} ms", ms);
  }
  // Let the leadership changes reach this broker's partitions, so acks=all
  // requests waiting here are answered NOT_LEADER_OR_FOLLOWER, not cut off.
  st = topics_->ReconcileNow();
  if (!st.ok()) Log()->warn("controlled shutdown: reconciling: {}", st.error().message);
}

}  // namespace strata::server
