#include "balancer/service/balancer_service.h"

#include <fmt/format.h>

#include <chrono>
#include <set>
#include <sstream>
#include <stdexcept>

#include "balancer/service/logger.h"

namespace strata::balancer {

namespace {

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

using balancer::Move;
using balancer::MoveOutcome;
using cluster::NodeId;

std::vector<std::string> SplitGoals(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string goal;
  while (std::getline(in, goal, ',')) {
    if (!goal.empty()) out.push_back(goal);
  }
  return out;
}

}  // namespace

BalancerOptions BalancerOptions::FromConfig(const config::BrokerConfig& c) {
  BalancerOptions o;
  o.enabled = c.GetBool("strata.balancer.enable");
  o.self_healing = c.GetBool("strata.balancer.self.healing.enable");
  o.cycle_interval = std::chrono::milliseconds(c.GetLong("strata.balancer.cycle.interval.ms"));
  o.failure_timeout_ms = c.GetLong("strata.balancer.broker.failure.timeout.ms");
  o.shutdown_grace_ms = c.GetLong("strata.balancer.broker.shutdown.grace.ms");
  o.max_failed_brokers = static_cast<int32_t>(c.GetLong("strata.balancer.max.failed.brokers"));
  o.stale_after_ms = c.GetLong("strata.balancer.metrics.stale.ms");
  o.cooldown_ms = c.GetLong("strata.balancer.partition.cooldown.ms");
  o.window_samples = static_cast<int>(c.GetLong("strata.balancer.metrics.window.samples"));
  o.metrics_interval_ms = c.GetLong("strata.balancer.metrics.interval.ms");
  o.planner.goals = SplitGoals(c.Get("strata.balancer.goals"));
  o.planner.band = std::stod(c.Get("strata.balancer.balance.deviation"));
  o.planner.network_floor =
      static_cast<double>(c.GetLong("strata.balancer.traffic.floor.bytes.per.sec"));
  o.planner.max_moves = static_cast<int>(c.GetLong("strata.balancer.max.moves.per.cycle"));
  o.planner.max_replicas_per_broker =
      static_cast<int32_t>(c.GetLong("strata.balancer.max.replicas.per.broker"));
  o.planner.disk_cap_ratio = std::stod(c.Get("strata.balancer.disk.cap.ratio"));
  o.executor.per_broker_concurrency =
      static_cast<int>(c.GetLong("strata.balancer.execution.concurrency"));
  o.executor.move_timeout_ms = c.GetLong("strata.balancer.move.timeout.ms");
  o.executor.throttle_bytes_per_sec =
      c.GetLong("strata.balancer.replication.throttle.bytes.per.sec");
  o.scaling.enabled = c.GetBool("strata.balancer.scaling.enable");
  o.scaling.scale_out_threshold = std::stod(c.Get("strata.balancer.scale.out.threshold"));
  o.scaling.scale_in_threshold = std::stod(c.Get("strata.balancer.scale.in.threshold"));
  o.scaling.sustain_ms = c.GetLong("strata.balancer.scale.sustain.ms");
  o.scaling.min_active_brokers =
      static_cast<int32_t>(c.GetLong("strata.balancer.scale.min.active.brokers"));
  o.scale_hook_command = c.Get("strata.balancer.scale.hook.command");
  o.scale_hook_timeout =
      std::chrono::milliseconds(c.GetLong("strata.balancer.scale.hook.timeout.ms"));
  if (o.scaling.scale_in_threshold >= o.scaling.scale_out_threshold) {
    throw std::invalid_argument(
        "strata.balancer.scale.in.threshold must be below strata.balancer.scale.out.threshold");
  }
  return o;
}

BalancerService::BalancerService(cluster::Metadata& metadata, cluster::Controller& controller,
                                 asio::any_io_executor io, BalancerOptions options,
                                 std::function<Status()> ensure_metrics_topic)
    : metadata_(metadata),
      controller_(controller),
      options_(std::move(options)),
      ensure_metrics_topic_(std::move(ensure_metrics_topic)),
      reader_(metadata.view(), io, options_.inter_broker_security),
      log_peers_(metadata.view(), io, "strata-balancer-log", options_.inter_broker_security),
      executor_(options_.executor),
      window_(options_.window_samples) {
  thread_ = std::thread([this] { Run(); });
}

BalancerService::~BalancerService() { Shutdown(); }

void BalancerService::Shutdown() {
  {
    std::lock_guard lock(wake_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

namespace {
constexpr const char* kClusterDefault = "default";  // TopicManager's kDefaultBrokerEntity

// A cluster-wide dynamic boolean, or `fallback` when not set.
bool DynamicFlag(const cluster::Metadata& metadata, const char* name, bool fallback) {
  const auto configs = metadata.BrokerConfigs(kClusterDefault);
  auto it = configs.find(name);
  return it == configs.end() ? fallback : it->second == "true";
}
}  // namespace

bool BalancerService::paused() const {
  return DynamicFlag(metadata_, "strata.balancer.paused", false);
}

bool BalancerService::enabled() const {
  return DynamicFlag(metadata_, "strata.balancer.enable", options_.enabled);
}

bool BalancerService::self_healing() const {
  return DynamicFlag(metadata_, "strata.balancer.self.healing.enable", options_.self_healing);
}

Status BalancerService::Pause() {
  STRATA_RETURN_IF_ERROR(
      metadata_.UpdateBrokerConfigs(kClusterDefault, [](std::map<std::string, std::string>& c) {
        c["strata.balancer.paused"] = "true";
        return Status::Ok();
      }));
  Log()->info("balancer: paused (strata.balancer.paused=true, cluster-wide)");
  return Status::Ok();
}

Status BalancerService::Resume() {
  STRATA_RETURN_IF_ERROR(
      metadata_.UpdateBrokerConfigs(kClusterDefault, [](std::map<std::string, std::string>& c) {
        c.erase("strata.balancer.paused");
        return Status::Ok();
      }));
  Log()->info("balancer: resumed (strata.balancer.paused removed)");
  return Status::Ok();
}

void BalancerService::RunNow() {
  {
    std::lock_guard lock(wake_mu_);
    run_now_ = true;
  }
  wake_.notify_all();
}

bool BalancerService::ShouldStop() {
  std::lock_guard lock(wake_mu_);
  return stopping_ || paused() || !controller_.active();
}

bool BalancerService::BrokerLeftSince(const std::set<cluster::NodeId>& live_at_plan, bool& logged) {
  for (cluster::NodeId id : live_at_plan) {
    if (metadata_.view().Broker(id)) continue;
    if (!logged) {
      Log()->info("balancer: broker {} left since the plan was made: nothing more of it starts",
                  id.value());
      logged = true;
    }
    return true;
  }
  return false;
}

bool BalancerService::TrackGoneBrokers(int64_t now_ms) {
  std::set<cluster::NodeId> live;
  for (const auto& b : metadata_.view().Brokers()) live.insert(b.registration.node_id);
  const std::vector<cluster::BrokerRegistration> known = metadata_.KnownBrokers();
  const balancer::ModelOptions options = ModelOptionsAt(now_ms);  // once, not per broker
  std::lock_guard lock(mu_);
  bool due = false;
  for (const auto& r : known) {
    if (live.count(r.node_id) > 0) {
      gone_since_ms_.erase(r.node_id);
      continue;
    }
    const int64_t since = gone_since_ms_.try_emplace(r.node_id, now_ms).first->second;
    balancer::BrokerTopology gone;
    gone.left_cleanly = r.left_cleanly;
    const int64_t dead_at = since + balancer::FailureTimeoutOf(gone, options);
    if (dead_at <= now_ms && dead_at > last_cycle_ms_) due = true;
  }
  if (now_ms < heal_retry_until_ms_ && now_ms - last_cycle_ms_ >= kHealRetryMs) due = true;
  return due;
}

void BalancerService::Run() {
  // Wakes at least every few seconds: a new controller makes the metrics
  // topic soon after it takes over, whatever the cycle interval.
  const auto tick =
      std::min<std::chrono::milliseconds>(options_.cycle_interval, std::chrono::seconds(2));
  auto next_cycle = std::chrono::steady_clock::now() + options_.cycle_interval;
  for (;;) {
    bool asked = false;
    bool heal_due = false;
    {
      std::unique_lock lock(wake_mu_);
      wake_.wait_for(lock, tick, [this] { return stopping_ || run_now_; });
      if (stopping_) return;
      asked = run_now_;
      run_now_ = false;
    }
    if (controller_.active()) {
      if (ensure_metrics_topic_ && (!metadata_.view().Topic(balancer::kMetricsTopic) ||
                                    !metadata_.view().Topic(balancer::kBalancerLogTopic))) {
        Status st = ensure_metrics_topic_();
        if (!st.ok()) {
          Log()->warn("balancer: creating its topics: {}", st.error().message);
        }
      }
      ReadLoad();  // every tick, so status and dry runs see fresh load
      // A broker just past the failure timeout is healed now, not at the
      // next cycle.
      heal_due = TrackGoneBrokers(WallClockMs()) && (enabled() || self_healing());
    } else {
      std::lock_guard lock(mu_);
      was_active_ = false;  // the next term reads the topic again
    }
    const auto now = std::chrono::steady_clock::now();
    if (!asked && !heal_due && now < next_cycle) continue;
    next_cycle = now + options_.cycle_interval;
    // An operator's apply runs a whole cycle even when periodic ones are
    // off; with balancing off, self-healing runs a hard-goals cycle.
    if (enabled() || asked) {
      Cycle(/*balance=*/true);
    } else if (self_healing()) {
      Cycle(/*balance=*/false);
    }
  }
}

}  // namespace strata::balancer
