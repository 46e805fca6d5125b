#include "broker/isr_updater.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "base/log.h"
#include "base/metrics.h"
#include "broker/logger.h"

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

IsrUpdater::IsrUpdater(Host& host, const config::BrokerConfig& config, cluster::Metadata& metadata,
                       Clock* clock, PeerLiveness& peers, ReassignmentProgress& progress)
    : host_(host),
      config_(config),
      metadata_(metadata),
      self_(config.node_id()),
      clock_(clock),
      peers_(peers),
      progress_(progress) {}

void IsrUpdater::Start() {
  // Exported from the start (at 0), so dashboards and alerts find them.
  IsrShrinks();
  IsrExpands();
  thread_ = std::thread([this] { Loop(); });
}

void IsrUpdater::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void IsrUpdater::Loop() {
  const int64_t lag_ms = config_.GetLong("replica.lag.time.max.ms");
  const auto period = std::chrono::milliseconds(std::clamp<int64_t>(lag_ms / 2, 50, 500));
  for (;;) {
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, period, [this] { return stopping_; });
      if (stopping_) return;
    }
    host_.BeforePass();
    UpdateOnce();
  }
}

int IsrUpdater::UpdateOnce() {
  if (host_.Fenced()) return 0;  // a broker that lost its lease changes nothing
  const int64_t lag_ms = config_.GetLong("replica.lag.time.max.ms");
  const std::vector<std::shared_ptr<Partition>> led = host_.LedPartitions();
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
    const Offset bound = host_.ContiguityBound(*p);
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
    auto written = metadata_.AlterPartition(p->topic_id(), p->tp().partition, self_,
                                            state.leader_epoch, state.partition_epoch, *wanted,
                                            host_.MinInsyncReplicas(p->tp().topic));
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
                  bound == Offset::Max() ? std::string("not tiered")
                                         : fmt::format("remote log reaches offset {}", bound - 1));
    }
    p->Apply(*written, now);
    host_.IsrChanged(*p);
    changes++;
    if (written->isr.size() < state.isr.size() ||
        std::any_of(state.isr.begin(), state.isr.end(), [&](cluster::NodeId r) {
          return std::find(written->isr.begin(), written->isr.end(), r) == written->isr.end();
        })) {
      shrinks_++;
      IsrShrinks().Add();
    }
    if (written->isr.size() > state.isr.size()) {
      expands_++;
      IsrExpands().Add();
    }
    Log()->info("{}: ISR [{}] -> [{}] at partition epoch {}", p->tp().ToString(),
                cluster::JoinIds(state.isr), cluster::JoinIds(written->isr),
                written->partition_epoch.value());
  }
  return changes;
}

void IsrUpdater::SuspectSilentFollowers(const std::vector<std::shared_ptr<Partition>>& led,
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
  for (cluster::NodeId r : silent) peers_.Suspect(r);
}

}  // namespace strata::broker
