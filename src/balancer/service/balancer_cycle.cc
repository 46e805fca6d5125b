// BalancerService, continued: one cycle (read load, scale, build the model,
// plan, carry out), the topology it reads from the metadata view, and the
// decisions it keeps for the admin API.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "balancer/service/balancer_service.h"
#include "balancer/service/balancer_throttle.h"
#include "balancer/service/logger.h"
#include "balancer/service/scale_hook.h"
#include "broker/topic_manager.h"
#include "cluster/partition_reassignment.h"

namespace strata::balancer {

namespace {

using balancer::Move;
using balancer::MoveOutcome;
using cluster::NodeId;

constexpr size_t kDecisionsKept = 200;

int64_t NowWallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

balancer::BrokerCapacity CapacityOf(const cluster::BrokerRegistration& r) {
  balancer::BrokerCapacity c;
  auto get = [&](const char* key) -> int64_t {
    auto it = r.capacity.find(key);
    return it == r.capacity.end() ? 0 : it->second;
  };
  c.network_in = static_cast<double>(get(cluster::kCapacityNetworkIn));
  c.network_out = static_cast<double>(get(cluster::kCapacityNetworkOut));
  c.disk = get(cluster::kCapacityDisk);
  c.cpu = static_cast<double>(get(cluster::kCapacityCpu));
  return c;
}

}  // namespace

// The executor's view of the cluster: reassignments and preferred
// elections through this broker's controller, states from its view.
class BalancerService::Port : public balancer::ReassignmentPort {
 public:
  Port(cluster::Metadata& metadata, cluster::Controller& controller)
      : metadata_(metadata), controller_(controller) {}

  Status Reassign(const std::string& topic, int32_t partition,
                  const std::vector<NodeId>& replicas) override {
    return Alter(topic, partition, replicas);
  }
  Status Cancel(const std::string& topic, int32_t partition) override {
    return Alter(topic, partition, std::nullopt);
  }
  std::optional<balancer::PartitionTopology> State(const std::string& topic,
                                                   int32_t partition) override {
    auto t = metadata_.view().Topic(topic);
    if (!t) return std::nullopt;
    auto p = metadata_.view().Partition(cluster::UuidToBase64(t->record.id), partition);
    if (!p) return std::nullopt;
    return balancer::PartitionTopology{topic,
                                       partition,
                                       p->record.replicas,
                                       p->record.leader,
                                       p->record.isr,
                                       cluster::Reassigning(p->record)};
  }
  Status ElectPreferred(const std::string& topic, int32_t partition) override {
    auto r = controller_.RunElections(cluster::ElectionType::kPreferred,
                                      std::vector<cluster::ElectionTarget>{{topic, partition}});
    if (!r.ok()) return r.take_error();
    return Status::Ok();
  }
  Status Throttle(const std::vector<Move>& moves, int64_t bytes_per_sec) override {
    return throttle_.Set(moves, bytes_per_sec);
  }
  Status Unthrottle() override { return throttle_.Clear(); }
  bool Live(NodeId id) override { return metadata_.view().Broker(id).has_value(); }
  int64_t NowMs() override { return NowWallMs(); }
  void Sleep(std::chrono::milliseconds d) override { std::this_thread::sleep_for(d); }

 private:
  Status Alter(const std::string& topic, int32_t partition,
               const std::optional<std::vector<NodeId>>& target) {
    auto t = metadata_.view().Topic(topic);
    if (!t) return MakeError(Errc::kNotFound, "no topic " + topic);
    auto change =
        metadata_.AlterReassignment(cluster::UuidToBase64(t->record.id), partition, target);
    if (!change.ok()) return change.take_error();
    if (change->error != cluster::ReassignmentError::kNone) {
      return MakeError(Errc::kInvalidArgument, change->message);
    }
    return Status::Ok();
  }

  cluster::Metadata& metadata_;
  cluster::Controller& controller_;
  BalancerThrottle throttle_{metadata_};
};

cluster::ScalingRoles BalancerService::Roles() const {
  return cluster::ScalingRoles::FromConfigs(metadata_.BrokerConfigs(broker::kDefaultBrokerEntity));
}

balancer::BuiltModel BalancerService::BuildLocked(int64_t now_ms,
                                                  const cluster::ScalingRoles& roles) {
  const cluster::MetadataView& view = metadata_.view();
  std::vector<balancer::BrokerTopology> brokers;
  std::set<NodeId> live;
  for (const auto& b : view.Brokers()) {
    const cluster::BrokerRegistration& r = b.registration;
    live.insert(r.node_id);
    const cluster::BrokerState role = roles.Effective(r);
    brokers.push_back({r.node_id, r.rack, true, role == cluster::BrokerState::kStandby,
                       role == cluster::BrokerState::kDraining,
                       !cluster::EligibleForLeadership(r.state), 0, CapacityOf(r)});
    gone_since_ms_.erase(r.node_id);
  }
  for (const auto& r : metadata_.KnownBrokers()) {
    if (live.count(r.node_id) > 0) continue;
    const int64_t since = gone_since_ms_.try_emplace(r.node_id, now_ms).first->second;
    brokers.push_back(
        {r.node_id, r.rack, false, false, false, true, since, CapacityOf(r), r.left_cleanly});
  }
  std::vector<balancer::PartitionTopology> partitions;
  for (const auto& t : view.Topics()) {
    for (const auto& [index, p] : view.Partitions(cluster::UuidToBase64(t.record.id))) {
      partitions.push_back({t.record.name, index, p.record.replicas, p.record.leader, p.record.isr,
                            cluster::Reassigning(p.record)});
    }
  }
  return balancer::BuildModel(brokers, partitions, window_, ModelOptionsAt(now_ms));
}

balancer::ModelOptions BalancerService::ModelOptionsAt(int64_t now_ms) const {
  balancer::ModelOptions o;
  o.now_ms = now_ms;
  o.stale_after_ms = options_.stale_after_ms;
  o.failure_timeout_ms = options_.failure_timeout_ms;
  o.shutdown_grace_ms = options_.shutdown_grace_ms;
  if (!self_healing()) {
    // Nobody is declared dead: a gone broker keeps its replicas (stale),
    // whether or not balancing is on.
    o.failure_timeout_ms = o.shutdown_grace_ms = std::numeric_limits<int64_t>::max() / 4;
  }
  o.max_failed_brokers = options_.max_failed_brokers;
  return o;
}

std::set<std::pair<std::string, int32_t>> BalancerService::CoolingLocked(int64_t now_ms) const {
  std::set<std::pair<std::string, int32_t>> out;
  for (const auto& [key, at] : moved_at_ms_) {
    if (now_ms - at < options_.cooldown_ms) out.insert(key);
  }
  return out;
}

void BalancerService::ReadLoad() {
  {
    std::lock_guard lock(mu_);
    if (!was_active_) {  // a new term: the window is rebuilt from the topic
      window_.Clear();
      reader_.Reset();
      gone_since_ms_.clear();
      was_active_ = true;
    }
  }
  // Not under mu_: the fetch runs on the io thread, which serves the admin
  // API, whose handlers take mu_.
  std::vector<balancer::MetricsSample> samples;
  Status read = reader_.Poll(samples, std::chrono::seconds(10));
  std::lock_guard lock(mu_);
  for (const auto& s : samples) window_.Add(s);
  last_error_ = read.ok() ? "" : read.error().message;
}

void BalancerService::Cycle(bool balance) {
  if (!controller_.active()) {
    std::lock_guard lock(mu_);
    was_active_ = false;
    return;
  }
  ReadLoad();
  if (balance) Scale();
  balancer::Plan plan;
  nlohmann::json audit;
  const cluster::ScalingRoles roles = Roles();
  {
    std::lock_guard lock(mu_);
    const int64_t now = NowWallMs();
    balancer::BuiltModel built = BuildLocked(now, roles);
    // Self-healing alone moves nothing while every broker is alive.
    if (!balance && built.dead.empty()) {
      last_cycle_ms_ = now;
      heal_retry_until_ms_ = 0;
      if (!built.note.empty()) Log()->warn("balancer: {}", built.note);
      return;
    }
    balancer::PlannerOptions planner = options_.planner;
    planner.cooling = CoolingLocked(now);
    const bool settling = now < settle_until_ms_;
    if (settling || !balance) planner.goals.clear();  // hard goals only
    plan = balancer::MakePlan(built.model, planner);
    last_plan_ = balancer::PlanToJson(plan);
    last_plan_ms_ = plan.plan_ms;
    last_plan_["dead_brokers"] = nlohmann::json::array();
    for (NodeId id : built.dead) last_plan_["dead_brokers"].push_back(id.value());
    last_plan_["note"] = built.note;
    if (!balance) {
      last_plan_["note"] = built.note.empty() ? built.note : built.note + "; ";
      last_plan_["note"] = last_plan_["note"].get<std::string>() +
                           "self-healing only (strata.balancer.enable=false): hard goals";
    } else if (settling) {
      last_plan_["settling_until_ms"] = settle_until_ms_;
      if (!built.note.empty()) last_plan_["note"] = built.note + "; ";
      last_plan_["note"] = last_plan_["note"].get<std::string>() +
                           "soft goals wait until the load window covers the last moves";
    }
    last_cycle_ms_ = now;
    const bool unfinished =
        !built.dead.empty() &&
        std::any_of(plan.violations.begin(), plan.violations.end(), [](const std::string& v) {
          return v.rfind(balancer::kGoalLiveBrokers, 0) == 0;
        });
    if (!unfinished) {
      heal_retry_until_ms_ = 0;
    } else if (heal_retry_until_ms_ == 0) {
      heal_retry_until_ms_ = now + options_.stale_after_ms + 2 * options_.metrics_interval_ms;
    }
    if (!built.note.empty()) Log()->warn("balancer: {}", built.note);
    audit = last_plan_;
  }
  if (!plan.moves.empty() || !plan.violations.empty() || !audit["dead_brokers"].empty()) {
    nlohmann::json record = std::move(audit);
    record["type"] = "plan";
    record["paused"] = paused();
    Audit("plan", std::move(record));
  }
  cycles_++;
  for (const std::string& v : plan.violations) Log()->warn("balancer: hard goal unmet: {}", v);
  if (plan.moves.empty() || paused()) return;
  Log()->info("balancer: {} moves planned in {:.0f} ms", plan.moves.size(), plan.plan_ms);
  for (const auto& g : plan.goals) {
    if (g.moves == 0) continue;
    Log()->info("balancer: goal {}: max {:.1f} -> {:.1f} (average {:.1f}), {} moves", g.goal,
                g.max_before, g.max_after, g.average, g.moves);
  }
  Port port(metadata_, controller_);
  moves_in_flight_ = static_cast<int64_t>(plan.moves.size());
  std::set<NodeId> live_at_plan;
  for (const auto& b : metadata_.view().Brokers()) live_at_plan.insert(b.registration.node_id);
  bool left_logged = false;
  executor_.Execute(
      plan.moves, port, [&] { return ShouldStop() || BrokerLeftSince(live_at_plan, left_logged); },
      [this] {
        std::lock_guard lock(wake_mu_);
        return stopping_;
      },
      [this](const MoveOutcome& o) { Record(o); });
  moves_in_flight_ = 0;
  std::lock_guard lock(mu_);
  settle_until_ms_ = NowWallMs() + options_.window_samples * options_.metrics_interval_ms;
}

void BalancerService::Scale() {
  if (!options_.scaling.enabled) return;
  const cluster::ScalingRoles roles = Roles();
  balancer::ScalingDecision d;
  {
    std::lock_guard lock(mu_);
    const int64_t now = NowWallMs();
    balancer::BuiltModel built = BuildLocked(now, roles);
    d = balancer::DecideScaling(built.model, roles, scaling_timers_, options_.scaling, now);
    const auto& o = options_.scaling;
    const auto& t = scaling_timers_;
    scaling_status_ = {
        {"enabled", true},
        {"utilization", d.utilization},
        {"dimension", d.dimension},
        {"scale_out_threshold", o.scale_out_threshold},
        {"scale_in_threshold", o.scale_in_threshold},
        {"sustain_ms", o.sustain_ms},
        {"above_since_ms", t.above_since_ms ? nlohmann::json(*t.above_since_ms) : nullptr},
        {"below_since_ms", t.below_since_ms ? nlohmann::json(*t.below_since_ms) : nullptr},
        {"activated", balancer::IdsToJson({d.roles.activated.begin(), d.roles.activated.end()})},
        {"draining", balancer::IdsToJson({d.roles.draining.begin(), d.roles.draining.end()})},
        {"retired", balancer::IdsToJson({d.roles.retired.begin(), d.roles.retired.end()})},
        {"note", d.reason},
        {"last_event", last_scale_event_}};
  }
  if (d.event == balancer::ScalingEvent::kNone) return;
  if (!(d.roles == roles)) {
    Status st = metadata_.UpdateBrokerConfigs(broker::kDefaultBrokerEntity,
                                              [&d](std::map<std::string, std::string>& configs) {
                                                d.roles.ToConfigs(configs);
                                                return Status::Ok();
                                              });
    if (!st.ok()) {
      Log()->warn("balancer: scaling ({}) not recorded: {}", d.reason, st.error().message);
      return;
    }
  }
  scale_events_++;
  Log()->info("balancer: scaling: {}: {}", balancer::ScalingEventName(d.event), d.reason);
  nlohmann::json record = {
      {"type", "scaling"},          {"event", balancer::ScalingEventName(d.event)},
      {"broker", d.broker.value()}, {"utilization", d.utilization},
      {"dimension", d.dimension},   {"reason", d.reason}};
  {
    std::lock_guard lock(mu_);
    last_scale_event_ = record;
    last_scale_event_["time_ms"] = NowWallMs();
    scaling_status_["last_event"] = last_scale_event_;
    decisions_.push_back(last_scale_event_);
    while (decisions_.size() > kDecisionsKept) decisions_.pop_front();
  }
  Audit("scaling", std::move(record));
  RunHook(d);
}

void BalancerService::RunHook(const balancer::ScalingDecision& d) {
  if (options_.scale_hook_command.empty()) return;
  const std::map<std::string, std::string> env = {
      {"STRATA_SCALE_EVENT", balancer::ScalingEventName(d.event)},
      {"STRATA_SCALE_BROKER", std::to_string(d.broker.value())},
      {"STRATA_SCALE_UTILIZATION", fmt::format("{:.4f}", d.utilization)},
      {"STRATA_SCALE_REASON", d.reason}};
  Status st = RunScaleHook(options_.scale_hook_command, env, options_.scale_hook_timeout);
  if (st.ok()) {
    Log()->info("balancer: scale hook for {} done", balancer::ScalingEventName(d.event));
  } else {
    Log()->warn("balancer: scale hook for {}: {}", balancer::ScalingEventName(d.event),
                st.error().message);
  }
}

void BalancerService::Record(const MoveOutcome& o) {
  const Move& m = o.move;
  const bool done = o.result == MoveOutcome::Result::kDone;
  (done ? moves_done_ : moves_failed_)++;
  moves_in_flight_--;
  auto log = done ? spdlog::level::info : spdlog::level::warn;
  Log()->log(log, "balancer: {} {}-{} [{}] -> [{}], leader {} -> {}: {} in {} ms ({}: {}){}",
             m.kind == balancer::MoveKind::kLeadership ? "leadership" : "replicas", m.topic,
             m.partition, cluster::JoinIds(m.replicas_before), cluster::JoinIds(m.replicas_after),
             m.leader_before, m.leader_after, balancer::MoveResultName(o.result), o.duration_ms,
             m.goal, m.reason, o.detail.empty() ? "" : " - " + o.detail);
  nlohmann::json d;
  {
    std::lock_guard lock(mu_);
    moved_at_ms_[{m.topic, m.partition}] = NowWallMs();
    d = {{"time_ms", NowWallMs()},
         {"result", balancer::MoveResultName(o.result)},
         {"detail", o.detail},
         {"duration_ms", o.duration_ms},
         {"topic", m.topic},
         {"partition", m.partition},
         {"goal", m.goal},
         {"reason", m.reason},
         {"leader_before", m.leader_before.value()},
         {"leader_after", m.leader_after.value()}};
    d["replicas_before"] = balancer::IdsToJson(m.replicas_before);
    d["replicas_after"] = balancer::IdsToJson(m.replicas_after);
    decisions_.push_back(d);
    while (decisions_.size() > kDecisionsKept) decisions_.pop_front();
  }
  d["type"] = "move";
  Audit(fmt::format("{}-{}", m.topic, m.partition), std::move(d));
}

void BalancerService::Audit(const std::string& key, nlohmann::json record) {
  const int64_t now = NowWallMs();
  record["time_ms"] = now;
  if (auto controller = metadata_.view().Controller())
    record["controller"] = controller->node.value();
  Status st = ProduceToLeader(log_peers_, balancer::kBalancerLogTopic, 0, {{key, record.dump()}},
                              now, std::chrono::seconds(10));
  if (!st.ok() && now - last_audit_warning_ms_ >= 60'000) {
    last_audit_warning_ms_ = now;
    Log()->warn("balancer: recording a decision in {}: {}", balancer::kBalancerLogTopic,
                st.error().message);
  }
}

nlohmann::json BalancerService::BrokerLoadJson() const {
  std::lock_guard lock(mu_);
  return BrokerLoadLocked();
}

// Each broker's latest load sample, as the window holds it (the active
// controller's only: others read no samples).
nlohmann::json BalancerService::BrokerLoadLocked() const {
  nlohmann::json load = nlohmann::json::array();
  for (const auto& r : metadata_.KnownBrokers()) {
    auto t = window_.Totals(r.node_id);
    if (!t) continue;
    load.push_back({{"node_id", r.node_id.value()},
                    {"network_in_bytes_per_sec", t->network_in_bytes_per_sec},
                    {"network_out_bytes_per_sec", t->network_out_bytes_per_sec},
                    {"cpu_cores_used", t->cpu_cores_used},
                    {"disk_used_bytes", t->disk_used_bytes},
                    {"disk_capacity_bytes", t->disk_capacity_bytes}});
  }
  return load;
}

nlohmann::json BalancerService::StatusJson() const {
  std::lock_guard lock(mu_);
  nlohmann::json decisions = nlohmann::json::array();
  for (const auto& d : decisions_) decisions.push_back(d);
  return {{"enabled", enabled()},
          {"self_healing", self_healing()},
          {"broker_load", BrokerLoadLocked()},
          {"paused", paused()},
          {"active_controller", controller_.active()},
          {"cycles", cycles_.load()},
          {"last_cycle_ms", last_cycle_ms_},
          {"moves_done", moves_done_.load()},
          {"moves_failed", moves_failed_.load()},
          {"moves_in_flight", moves_in_flight_.load()},
          {"samples", window_.sample_count()},
          {"metrics_records_read", reader_.records_read()},
          {"last_error", last_error_},
          {"last_plan", last_plan_},
          {"scaling", scaling_status_},
          {"recent_decisions", decisions}};
}

nlohmann::json BalancerService::DryRun() {
  if (!controller_.active()) {
    return {{"error", "this broker is not the active controller"},
            {"controller",
             metadata_.view().Controller() ? metadata_.view().Controller()->node.value() : -1}};
  }
  const cluster::ScalingRoles roles = Roles();
  std::lock_guard lock(mu_);
  const int64_t now = NowWallMs();
  balancer::BuiltModel built = BuildLocked(now, roles);
  balancer::PlannerOptions planner = options_.planner;
  planner.cooling = CoolingLocked(now);
  nlohmann::json out = balancer::PlanToJson(balancer::MakePlan(built.model, planner));
  out["dry_run"] = true;
  if (!last_error_.empty()) out["metrics_error"] = last_error_;
  return out;
}

}  // namespace strata::balancer
