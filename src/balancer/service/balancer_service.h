#pragma once
// BalancerService: the autobalancer, run by the active controller (design
// section 7). Every strata.balancer.cycle.interval.ms, while this broker
// is the active controller and the balancer is enabled, it reads the new
// samples of `__strata_metrics` into its load window, builds a
// ClusterModel from the metadata view and the window, plans on it
// (balancer/planner.h) and, unless paused, carries the plan out as
// reassignments (balancer/executor.h). Brokers gone longer than
// strata.balancer.broker.failure.timeout.ms (strata.balancer.broker.
// shutdown.grace.ms for one that left by a clean shutdown) are declared dead
// and their replicas re-placed (self-healing,
// strata.balancer.self.healing.enable): with the balancer off and healing
// on, a cycle runs only while a broker is dead, and plans with the hard
// goals alone. With strata.balancer.scaling.enable,
// sustained high or low utilization activates a standby broker or drains
// one back to standby (balancer/scaling.h) before planning, so the same
// cycle's plan fills or empties it. Every decision is logged with its
// reason and kept for the admin API (/v1/balancer).
//
// Thread-safety: one thread of its own runs the cycles; StatusJson, DryRun,
// Pause, Resume and RunNow may be called from any thread.
#include <asio/any_io_executor.hpp>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "balancer/executor.h"
#include "balancer/load_window.h"
#include "balancer/model_builder.h"
#include "balancer/plan_json.h"
#include "balancer/planner.h"
#include "balancer/scaling.h"
#include "balancer/service/metrics_topic_reader.h"
#include "balancer/service/produce_to_leader.h"
#include "cluster/controller.h"
#include "cluster/metadata.h"
#include "config/broker_config.h"

namespace strata::balancer {

struct BalancerOptions {
  // How its readers and producers reach other brokers (null: PLAINTEXT).
  net::ClientSecurity inter_broker_security;
  bool enabled = true;
  bool self_healing = true;
  std::chrono::milliseconds cycle_interval{60'000};
  int64_t failure_timeout_ms = 60'000;
  int64_t shutdown_grace_ms = 600'000;
  int32_t max_failed_brokers = 1;
  int64_t stale_after_ms = 60'000;
  int64_t cooldown_ms = 600'000;
  int window_samples = 6;
  int64_t metrics_interval_ms = 10'000;
  balancer::PlannerOptions planner;
  balancer::ExecutorOptions executor;
  balancer::ScalingOptions scaling;
  std::string scale_hook_command;  // empty: none
  std::chrono::milliseconds scale_hook_timeout{30'000};
  static BalancerOptions FromConfig(const config::BrokerConfig& config);
};

class BalancerService {
 public:
  // `ensure_metrics_topic` creates `__strata_metrics` when it is missing;
  // called while this broker is the active controller, whether balancing
  // is enabled or not (every broker publishes load regardless).
  BalancerService(cluster::Metadata& metadata, cluster::Controller& controller,
                  asio::any_io_executor io, BalancerOptions options,
                  std::function<Status()> ensure_metrics_topic);
  ~BalancerService();

  // The admin API: state, last plan, recent decisions, as JSON.
  nlohmann::json StatusJson() const;
  // [{node_id, network_in/out_bytes_per_sec, cpu_cores_used, disk_*}]: each
  // broker's latest load sample (empty unless this broker is the controller).
  nlohmann::json BrokerLoadJson() const;
  // A plan on the current model, not carried out (dry run). It does no
  // I/O: the load is what the balancer's thread last read (every tick).
  nlohmann::json DryRun();
  // Pause and resume are the cluster-wide dynamic config
  // strata.balancer.paused (what kafka-configs --entity-default sets), so
  // they hold across controller changes and may be asked of any broker.
  Status Pause();
  Status Resume();
  // Starts a cycle now (apply).
  void RunNow();
  // Stops the cycles (a move being waited for is left to the controller);
  // idempotent, and what the destructor does.
  void Shutdown();

  int64_t cycles() const { return cycles_.load(); }
  int64_t moves_done() const { return moves_done_.load(); }
  int64_t moves_failed() const { return moves_failed_.load(); }
  int64_t scale_events() const { return scale_events_.load(); }
  int64_t moves_in_flight() const { return moves_in_flight_.load(); }
  // How long the last cycle's planning took (0 before the first).
  double last_plan_ms() const { return last_plan_ms_.load(); }
  bool paused() const;
  // strata.balancer.enable, dynamic cluster-wide value first.
  bool enabled() const;
  // strata.balancer.self.healing.enable, dynamic cluster-wide value first.
  bool self_healing() const;

 private:
  class Port;  // ReassignmentPort on the metadata and the controller
  void Run();
  // A cycle; with `balance` false (self-healing only) it plans with the
  // hard goals alone and only while a broker is dead, and does not scale.
  void Cycle(bool balance);
  // Notes when each known broker's registration went (every tick, so the
  // failure timeout runs from then, not from the next cycle); true when one
  // has been gone past the timeout since the last cycle, or an unfinished
  // heal is due a retry.
  bool TrackGoneBrokers(int64_t now_ms);
  nlohmann::json BrokerLoadLocked() const;
  // Reads new samples into the window (a new controller term starts over).
  void ReadLoad();
  // Scaling's decision on the current model: the new roles are written to
  // the cluster configs, logged, audited and passed to the hook command.
  void Scale();
  void RunHook(const balancer::ScalingDecision& d);
  // The model's options at `now_ms` (the timeouts from the config).
  balancer::ModelOptions ModelOptionsAt(int64_t now_ms) const;
  // The model of now, under mu_, with the brokers' roles as `roles` has them.
  balancer::BuiltModel BuildLocked(int64_t now_ms, const cluster::ScalingRoles& roles);
  cluster::ScalingRoles Roles() const;
  std::set<std::pair<std::string, int32_t>> CoolingLocked(int64_t now_ms) const;
  void Record(const balancer::MoveOutcome& outcome);
  // Appends a decision to `__strata_balancer_log` (key: "plan" or the
  // partition); a failure is logged, at most once a minute.
  void Audit(const std::string& key, nlohmann::json record);
  bool ShouldStop();
  // Whether a broker of `live_at_plan` is no longer registered: the plan
  // was made for a cluster that is gone (logged once per plan).
  bool BrokerLeftSince(const std::set<cluster::NodeId>& live_at_plan, bool& logged);

  cluster::Metadata& metadata_;
  cluster::Controller& controller_;
  const BalancerOptions options_;
  const std::function<Status()> ensure_metrics_topic_;
  MetricsTopicReader reader_;
  PeerClients log_peers_;  // produces to __strata_balancer_log
  int64_t last_audit_warning_ms_ = 0;
  balancer::Executor executor_;

  mutable std::mutex mu_;  // the window, the gone times, the last plan, the decisions
  balancer::LoadWindow window_;
  std::map<cluster::NodeId, int64_t> gone_since_ms_;
  std::map<std::pair<std::string, int32_t>, int64_t> moved_at_ms_;
  nlohmann::json last_plan_;
  std::string last_error_;
  std::deque<nlohmann::json> decisions_;  // newest last
  balancer::ScalingTimers scaling_timers_;
  nlohmann::json scaling_status_ = nlohmann::json::object();
  nlohmann::json last_scale_event_;
  int64_t last_cycle_ms_ = 0;
  // The last cycle left replicas on a dead broker with nowhere to go: until
  // then it is retried every kHealRetryMs, not at the next cycle, for as
  // long as the cause may be brokers without a fresh load sample (a new
  // controller rebuilding its window: the stale time and two metrics
  // intervals); a cause that lasts (no room anywhere: RF 3 on three
  // brokers, one dead) waits for the cycles.
  int64_t heal_retry_until_ms_ = 0;
  static constexpr int64_t kHealRetryMs = 5'000;
  // Until then only hard goals plan: the load window still holds samples
  // from before the last moves, which would show their sources hot.
  int64_t settle_until_ms_ = 0;
  bool was_active_ = false;

  std::atomic<int64_t> cycles_{0};
  std::atomic<int64_t> moves_done_{0};
  std::atomic<int64_t> moves_failed_{0};
  std::atomic<int64_t> moves_in_flight_{0};
  std::atomic<int64_t> scale_events_{0};
  std::atomic<double> last_plan_ms_{0};

  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool run_now_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace strata::balancer
