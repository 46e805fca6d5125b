// Broker::ControlledShutdown: the broker's half of Kafka's controlled
// shutdown. The registration goes to state "controlled_shutdown"; the
// controller then treats the broker as gone for leadership (it leaves every
// ISR it shares with another live broker, and its leaderships move to live
// ISR members), while it still serves. Producers see NOT_LEADER_OR_FOLLOWER
// (retriable) and find the new leader; no acks=all write waits on it.
#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "broker/broker.h"
#include "broker/log.h"

namespace strata::broker {

namespace {

// Partitions where this broker leads or is in the ISR although another
// live, eligible ISR member could take its place: what the controller has
// still to move.
int PartitionsToMove(cluster::MetadataView& view, cluster::NodeId self) {
  const std::set<cluster::NodeId> eligible = view.BrokersEligibleForLeadership();
  int out = 0;
  for (const auto& topic : view.Topics()) {
    for (const auto& [p, entry] : view.Partitions(cluster::UuidToBase64(topic.record.id))) {
      const auto& isr = entry.record.isr;
      bool mine =
          entry.record.leader == self || std::find(isr.begin(), isr.end(), self) != isr.end();
      if (!mine) continue;
      bool other = std::any_of(isr.begin(), isr.end(), [&](cluster::NodeId r) {
        return r != self && eligible.contains(r);
      });
      if (other) out++;
    }
  }
  return out;
}

}  // namespace

void Broker::ControlledShutdown() {
  if (!session_ || !metadata_ || !config_.GetBool("controlled.shutdown.enable")) return;
  const cluster::NodeId self(config_.node_id());
  const auto start = std::chrono::steady_clock::now();
  const int before = PartitionsToMove(metadata_->view(), self);
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
  int left = before;
  while ((left = PartitionsToMove(metadata_->view(), self)) > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
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

}  // namespace strata::broker
