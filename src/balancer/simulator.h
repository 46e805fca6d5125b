#pragma once
// Simulator: the real planner on a synthetic cluster, for `strata balance
// simulate` and the planner's benchmarks and property tests.
//
// The synthetic cluster: `brokers` active brokers on `racks` racks
// (broker i on rack i % racks), `partitions` partitions in topics of
// `partitions_per_topic`, each with `replication_factor` replicas. A
// topic's load is drawn uniformly from 0.5x to 1.5x the mean; within a
// topic, with skew zipf:s, partition i carries a share proportional to
// 1 / (i + 1)^s (keyed traffic with hot keys; "uniform": equal shares).
// Consumer bytes out are bytes in x fan_out. The placement is Kafka's
// (round_robin: each topic from a random broker, replicas on the brokers
// after it, which alternate racks) or, with zipf:s, skewed: a replica lands
// on the broker of rank r with probability proportional to 1 / r^s, on
// distinct brokers and racks, as in a cluster that grew unevenly.
// Everything comes from `seed`, so a run is repeatable.
//
// Thread-safety: pure functions.
#include <cstdint>
#include <string>

#include "balancer/cluster_model.h"
#include "balancer/planner.h"
#include "base/result.h"

namespace strata::balancer {

struct SimulationOptions {
  int32_t brokers = 100;
  int64_t partitions = 10000;
  int32_t racks = 3;
  int32_t replication_factor = 3;
  int32_t partitions_per_topic = 100;
  std::string skew = "zipf:1.1";          // partition load within a topic, or "uniform"
  std::string placement = "round_robin";  // or "zipf:<s>"
  double mean_bytes_in = 100e3;           // per partition, bytes/s
  double fan_out = 1.0;                   // consumer bytes out per byte in
  int64_t mean_size = 256LL << 20;
  uint64_t seed = 1;
  PlannerOptions planner;  // max_moves <= 0: no cap
};

// The synthetic cluster; errors for options that make none (bad skew text,
// more replicas than brokers).
Result<ClusterModel> SynthesizeCluster(const SimulationOptions& options);

struct SimulationReport {
  Plan plan;
  int64_t leadership_moves = 0;
  int64_t replica_moves = 0;
  int64_t bytes_to_move = 0;  // the moved replicas' local size (what a full copy moves)
  // max/avg of network in: the initial placement, after the plan, and
  // Kafka's round-robin placement of the same partitions.
  double network_in_before = 0, network_in_after = 0, network_in_round_robin = 0;
};

Result<SimulationReport> Simulate(const SimulationOptions& options);
// A human report (or JSON with `json`).
std::string FormatReport(const SimulationOptions& options, const SimulationReport& report,
                         bool json);

// max/avg of a broker figure over the active brokers (0 when none).
double MaxOverAverage(const ClusterModel& model, double (*value)(const BrokerLoad&));

}  // namespace strata::balancer
