// TopicManager's ISR thread: the leader's half of Kafka's AlterPartition.
// Every replica.lag.time.max.ms / 2 (at most 500 ms apart) it asks each
// partition this broker leads which ISR it wants now, followers that caught
// up in and followers that lag out, and writes the change to the partition
// record by compare-and-set. The record comes back through the view; until
// then the high watermark goes by the ISR of the record it has.
#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "base/log.h"
#include "base/metrics.h"
#include "broker/logger.h"
#include "broker/topic_manager.h"

namespace strata::broker {

namespace {

metrics::Counter& IsrShrinks() {
  static metrics::Counter& c = metrics::Global().GetCounter(
      "strata_isr_shrinks_total", "ISR changes written by this broker that removed a replica");
  return c;
}
metrics::Counter& IsrExpands() {
  static metrics::Counter& c = metrics::Global().GetCounter(
      "strata_isr_expands_total", "ISR changes written by this broker that added a replica");
  return c;
}

}  // namespace

void TopicManager::IsrLoop() {
  // Exported from the start (at 0), so dashboards and alerts find them.
  IsrShrinks();
  IsrExpands();
  const int64_t lag_ms = config_.GetLong("replica.lag.time.max.ms");
  const auto period = std::chrono::milliseconds(std::clamp<int64_t>(lag_ms / 2, 50, 500));
  for (;;) {
    {
      std::unique_lock lock(isr_mu_);
      isr_wake_.wait_for(lock, period, [this] { return isr_stopping_; });
      if (isr_stopping_) return;
    }
    RefreshReplicationThrottles();
    UpdateIsrs();
  }
}

void TopicManager::StopIsrThread() {
  {
    std::lock_guard lock(isr_mu_);
    isr_stopping_ = true;
  }
  isr_wake_.notify_all();
  if (isr_thread_.joinable()) isr_thread_.join();
}

int TopicManager::UpdateIsrs() {
  if (fenced_.load()) return 0;  // a broker that lost its lease changes nothing
  const int64_t lag_ms = config_.GetLong("replica.lag.time.max.ms");
  std::vector<std::shared_ptr<Partition>> led;
  {
    std::shared_lock lock(mu_);
    for (const auto& [tp, p] : partitions_) {
      if (p->leader() == self_) led.push_back(p);
    }
  }
  // Brokers that may join an ISR: as Kafka's INELIGIBLE_REPLICA, not one
  // that is fenced or in controlled shutdown (it still fetches while its
  // leaderships move, and must not be taken back in).
  const std::set<cluster::NodeId> eligible = metadata_.view().BrokersEligibleForLeadership();
  std::map<cluster::NodeId, int64_t> epochs;
  for (const auto& b : metadata_.view().Brokers()) epochs[b.registration.node_id] = b.epoch.value();
  auto current_epoch = [&epochs](cluster::NodeId id) {
    auto it = epochs.find(id);
    return it == epochs.end() ? int64_t{0} : it->second;
  };
  int changes = 0;
  const int64_t now = clock_->MonotonicMs();
  SuspectSilentFollowers(led, now);
  progress_.Update(led, now);
  for (const auto& p : led) {
    p->ForgetRestartedFollowers(current_epoch);
    const int64_t bound = ContiguityBound(*p);
    auto wanted = p->WantedState(now, lag_ms, bound);
    if (!wanted) continue;
    cluster::PartitionRecord state = p->state();
    // Not proposed (the maximal ISR would wait for it): a joiner that is
    // ineligible, or whose fetches were made under an earlier registration
    // than the one seen now (AlterPartition would refuse it).
    std::erase_if(wanted->isr, [&](cluster::NodeId r) {
      if (std::find(state.isr.begin(), state.isr.end(), r) != state.isr.end()) return false;
      auto joined = wanted->joining_epochs.find(r);
      return !eligible.contains(r) ||
             (joined != wanted->joining_epochs.end() && joined->second != current_epoch(r));
    });
    if (std::is_permutation(wanted->isr.begin(), wanted->isr.end(), state.isr.begin(),
                            state.isr.end()) &&
        wanted->non_contiguous == state.non_contiguous) {
      continue;
    }
    p->ProposeIsr(state.partition_epoch, wanted->isr);
    auto info = GetTopicInfo(p->tp().topic);
    auto written = metadata_.AlterPartition(p->topic_id(), p->tp().partition, self_,
                                            state.leader_epoch, state.partition_epoch, *wanted,
                                            info ? info->min_insync_replicas : 1);
    if (!written.ok()) {
      // A stale record (the view will bring the new one) or etcd away:
      // decided again on the next pass.
      Log()->warn(
          "{}: changing the ISR from [{}] to [{}] (not contiguous with remote storage: "
          "[{}]) failed: {}",
          p->tp().ToString(), cluster::JoinIds(state.isr), cluster::JoinIds(wanted->isr),
          cluster::JoinIds(wanted->non_contiguous), written.error().message);
      continue;
    }
    if (written->non_contiguous != state.non_contiguous) {
      Log()->info("{}: replicas not contiguous with remote storage [{}] -> [{}] ({})",
                  p->tp().ToString(), cluster::JoinIds(state.non_contiguous),
                  cluster::JoinIds(written->non_contiguous),
                  bound == std::numeric_limits<int64_t>::max()
                      ? std::string("not tiered")
                      : fmt::format("remote log reaches offset {}", bound - 1));
    }
    p->Apply(*written, now);
    AdvanceHighWatermark(*p);
    changes++;
    if (written->isr.size() < state.isr.size() ||
        std::any_of(state.isr.begin(), state.isr.end(), [&](cluster::NodeId r) {
          return std::find(written->isr.begin(), written->isr.end(), r) == written->isr.end();
        })) {
      isr_shrinks_++;
      IsrShrinks().Add();
    }
    if (written->isr.size() > state.isr.size()) {
      isr_expands_++;
      IsrExpands().Add();
    }
    Log()->info("{}: ISR [{}] -> [{}] at partition epoch {}", p->tp().ToString(),
                cluster::JoinIds(state.isr), cluster::JoinIds(written->isr),
                written->partition_epoch.value());
  }
  return changes;
}

int64_t TopicManager::ContiguityBound(const Partition& p) const {
  auto info = GetTopicInfo(p.tp().topic);
  if (!remote_ || !info || !info->log_config.remote_storage_enable) {
    return std::numeric_limits<int64_t>::max();  // nothing remote to join up with
  }
  // Offsets below the partition's log start are gone everywhere; up to the
  // remote end they are in remote storage. Only the end saved in the
  // metadata store counts: it names a durable manifest, which a successor
  // finds. This leader's own uploads are not there until that manifest is
  // written and the end saved; a replica counted contiguous earlier, and
  // the old replicas of a move deleted on that basis, would leave offsets
  // held nowhere if the new leader took over first (it retires uploads the
  // manifest it finds does not list as finished).
  int64_t remote_end = -1;
  if (auto saved = store_.GetRemoteLogOffsets(p.topic_id(), p.tp().partition)) {
    remote_end = saved->end;
  }
  return std::max(LogStartOffset(p.tp(), *p.log()), remote_end + 1);
}

void TopicManager::SuspectSilentFollowers(const std::vector<std::shared_ptr<Partition>>& led,
                                          int64_t now_ms) {
  // A live follower always has a fetch waiting here or on its way, so one
  // not heard of for a whole fetch wait and then some may be gone: the
  // liveness probe finds out (only a refused connection counts).
  const int64_t silent_ms = config_.GetLong("replica.fetch.wait.max.ms") + 1000;
  std::set<cluster::NodeId> silent;
  for (const auto& p : led) {
    for (cluster::NodeId r : p->state().isr) {
      if (r == self_ || silent.contains(r)) continue;
      auto f = p->Follower(r);
      int64_t heard = f ? std::max(f->last_fetch_ms, f->last_caught_up_ms) : 0;
      if (heard > 0 && now_ms - heard > silent_ms) silent.insert(r);
    }
  }
  for (cluster::NodeId r : silent) peers_->Suspect(r);
}

}  // namespace strata::broker

namespace strata::broker {

TopicManager::ReplicationStats TopicManager::replication_stats() const {
  ReplicationStats out;
  for (const auto& p : LocalPartitions()) {
    cluster::PartitionRecord state = p->state();
    if (state.leader != self_) {
      if (state.leader != cluster::kNoNode)
        out.max_follower_lag = std::max(out.max_follower_lag, p->follower_lag());
      continue;
    }
    if (state.isr.size() < state.replicas.size()) out.under_replicated++;
    if (!state.non_contiguous.empty()) out.non_contiguous++;
    auto info = GetTopicInfo(p->tp().topic);
    if (info && static_cast<int>(state.isr.size()) < info->min_insync_replicas) out.under_min_isr++;
  }
  out.followed = static_cast<int64_t>(fetchers_->followed());
  out.fetched_bytes = fetchers_->bytes_fetched();
  out.isr_shrinks = isr_shrinks_.load();
  out.isr_expands = isr_expands_.load();
  return out;
}

std::vector<std::pair<TopicPartition, int64_t>> TopicManager::FollowerLags() const {
  std::vector<std::pair<TopicPartition, int64_t>> out;
  for (const auto& p : LocalPartitions()) {
    const cluster::NodeId leader = p->leader();
    if (leader != self_ && leader != cluster::kNoNode) out.push_back({p->tp(), p->follower_lag()});
  }
  return out;
}

std::vector<TopicManager::FollowerTimeLag> TopicManager::FollowerTimeLags() const {
  std::vector<FollowerTimeLag> out;
  const int64_t now = clock_->MonotonicMs();
  for (const auto& p : LocalPartitions()) {
    if (p->leader() != self_) continue;
    for (cluster::NodeId r : p->state().replicas) {
      if (r == self_) continue;
      if (auto f = p->Follower(r)) {
        out.push_back({p->tp(), r, std::max<int64_t>(0, now - f->last_caught_up_ms)});
      }
    }
  }
  return out;
}

}  // namespace strata::broker
