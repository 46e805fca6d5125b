#include "app/balance_command.h"

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "app/balance_api.h"
#include "app/command_config.h"
#include "balancer/simulator.h"

namespace strata::app {

namespace {

struct BalanceFlags {
  CLI::App* simulate = nullptr;
  // status, plan, pause, resume, apply: over the admin API.
  std::map<std::string, CLI::App*> api;
  std::string admin = "127.0.0.1:8085";
  std::string format = "human";
  balancer::SimulationOptions sim;
  bool json = false;
  int32_t replica_cap = 0;
};

BalanceFlags& Flags() {
  static BalanceFlags flags;
  return flags;
}

}  // namespace

void AddBalanceCommands(CLI::App& app) {
  BalanceFlags& f = Flags();
  auto* balance = app.add_subcommand("balance", "the autobalancer");
  balance->require_subcommand(1);
  f.simulate =
      balance->add_subcommand("simulate", "run the planner on a synthetic cluster and report");
  auto& s = f.sim;
  f.simulate->add_option("--brokers", s.brokers)->check(CLI::Range(1, 100000));
  f.simulate->add_option("--partitions", s.partitions)->check(CLI::Range(1LL, 100000000LL));
  f.simulate->add_option("--racks", s.racks)->check(CLI::Range(1, 1000));
  f.simulate->add_option("--replication-factor", s.replication_factor)->check(CLI::Range(1, 16));
  f.simulate->add_option("--partitions-per-topic", s.partitions_per_topic)
      ->check(CLI::Range(1, 1000000));
  f.simulate->add_option("--skew", s.skew, "partition load within a topic: zipf:<s> or uniform");
  f.simulate->add_option("--placement", s.placement, "initial placement: round_robin or zipf:<s>");
  f.simulate->add_option("--seed", s.seed);
  f.simulate->add_option("--band", s.planner.band, "balance band around the average (0.1: +-10%)")
      ->check(CLI::Range(0.0, 10.0));
  f.simulate->add_option("--max-moves", s.planner.max_moves, "moves per cycle (0: no cap)");
  f.simulate->add_option("--mean-bytes-in", s.mean_bytes_in, "per partition, bytes/s");
  f.simulate->add_option("--goals", s.planner.goals, "soft goals in order (comma separated)")
      ->delimiter(',');
  f.simulate->add_option("--max-replicas-per-broker", f.replica_cap, "replica cap (0: none)");
  s.planner.max_moves = 0;
  f.simulate->add_flag("--json", f.json, "print the report as JSON");
  const std::pair<const char*, const char*> api[] = {
      {"status", "the balancer's state, last plan and recent decisions"},
      {"plan", "a dry-run plan now (from the active controller)"},
      {"pause", "stop carrying out moves, cluster-wide"},
      {"resume", "carry out moves again"},
      {"apply", "run a balancing cycle now"}};
  for (const auto& [name, help] : api) {
    CLI::App* sub = balance->add_subcommand(name, help);
    sub->add_option("--admin", f.admin,
                    "a broker's admin listener host:port (https://host:port over TLS)")
        ->capture_default_str();
    sub->add_option_function<std::string>("--command-config", SetCommandConfigPath,
                                          "client properties (strata.admin.token, ssl.*)");
    sub->add_option("--format", f.format, "human or json")->check(CLI::IsMember({"human", "json"}));
    f.api[name] = sub;
  }
}

bool RunBalance(int* exit_code) {
  BalanceFlags& f = Flags();
  for (const auto& [name, sub] : f.api) {
    if (sub->parsed()) {
      *exit_code = RunBalanceApi(name, f.admin, f.format == "json");
      return true;
    }
  }
  if (f.simulate == nullptr || !f.simulate->parsed()) return false;
  f.sim.planner.max_replicas_per_broker = f.replica_cap > 0 ? f.replica_cap : INT32_MAX;
  auto report = balancer::Simulate(f.sim);
  if (!report.ok()) {
    std::fprintf(stderr, "strata balance simulate: %s\n", report.error().message.c_str());
    *exit_code = 2;
    return true;
  }
  std::cout << balancer::FormatReport(f.sim, *report, f.json);
  *exit_code = report->plan.violations.empty() ? 0 : 1;
  return true;
}

}  // namespace strata::app
