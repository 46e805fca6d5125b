#include "balancer/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "balancer/plan_json.h"

namespace strata::balancer {

namespace {

// Uniform in [lo, hi) from the engine's bits: std's distributions differ
// between standard libraries, and a run must repeat everywhere.
double Uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Picks replica brokers: by a zipf law over broker ranks, or round robin.
class Placer {
 public:
  Placer(const SimulationOptions& o, double exponent) : o_(o), zipf_(exponent > 0) {
    double sum = 0;
    for (int32_t r = 1; r <= o.brokers; ++r) {
      sum += zipf_ ? 1.0 / std::pow(r, exponent) : 1.0;
      cdf_.push_back(sum);
    }
    for (double& c : cdf_) c /= sum;
  }

  // Brokers (indexes) for partition `p`: distinct, on distinct racks
  // while racks last.
  std::vector<int32_t> Place(int64_t p, std::mt19937_64& rng) const {
    std::vector<int32_t> out;
    const int32_t rf = o_.replication_factor;
    if (!zipf_) {
      // Kafka's rack-aware round robin: replica j on rack (p + j) % racks,
      // going round that rack's brokers (broker i is on rack i % racks).
      const int32_t racks = std::min(o_.racks, o_.brokers);
      for (int32_t j = 0; j < rf; ++j) {
        const auto rack = static_cast<int32_t>((p + j) % racks);
        const int32_t in_rack = (o_.brokers - rack + racks - 1) / racks;
        const int64_t k = (p / racks + j / racks) % in_rack;
        out.push_back(static_cast<int32_t>(rack + k * racks));
      }
      return out;
    }
    for (int attempt = 0; static_cast<int32_t>(out.size()) < rf; ++attempt) {
      const double u = Uniform(rng, 0, 1);
      auto b = static_cast<int32_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
      b = std::min(b, o_.brokers - 1);
      if (attempt > 1000) b = static_cast<int32_t>((p + out.size()) % o_.brokers);
      if (std::find(out.begin(), out.end(), b) != out.end()) continue;
      const bool rack_used = std::any_of(out.begin(), out.end(),
                                         [&](int32_t x) { return x % o_.racks == b % o_.racks; });
      if (rack_used && static_cast<int32_t>(out.size()) < o_.racks && attempt <= 1000) continue;
      out.push_back(b);
    }
    return out;
  }

 private:
  const SimulationOptions& o_;
  const bool zipf_;
  std::vector<double> cdf_;
};

// "zipf:<s>" -> s; `plain` (uniform, round_robin) -> 0.
Result<double> ParseZipf(const std::string& text, const char* plain, const char* flag) {
  if (text == plain) return 0.0;
  if (text.rfind("zipf:", 0) == 0) {
    try {
      const double s = std::stod(text.substr(5));
      if (s > 0 && std::isfinite(s)) return s;
    } catch (const std::exception&) {
    }
  }
  return MakeError(Errc::kInvalidArgument, fmt::format("{} must be zipf:<exponent above 0> or {}, "
                                                       "not '{}'",
                                                       flag, plain, text));
}

// Each partition's share of its topic's load: 1 / (i + 1)^s, normalised.
std::vector<double> PartitionShares(int32_t n, double exponent) {
  std::vector<double> shares(n);
  double sum = 0;
  for (int32_t i = 0; i < n; ++i) sum += shares[i] = 1.0 / std::pow(i + 1, exponent);
  for (double& x : shares) x *= n / sum;  // mean 1
  return shares;
}

Result<ClusterModel> Build(const SimulationOptions& o, double load_exponent,
                           double placement_exponent) {
  if (o.brokers < 1 || o.partitions < 1 || o.replication_factor < 1 || o.racks < 1 ||
      o.partitions_per_topic < 1) {
    return MakeError(Errc::kInvalidArgument,
                     "brokers, partitions, racks and replicas must be >= 1");
  }
  if (o.replication_factor > o.brokers) {
    return MakeError(Errc::kInvalidArgument, "more replicas than brokers");
  }
  ClusterModel model;
  for (int32_t b = 0; b < o.brokers; ++b) {
    BrokerInfo info;
    info.id = NodeId(b + 1);
    info.rack = o.racks > 1 ? fmt::format("rack-{}", b % o.racks) : "";
    model.AddBroker(std::move(info));
  }
  std::mt19937_64 load_rng(o.seed);
  std::mt19937_64 place_rng(o.seed ^ 0x9e3779b97f4a7c15ULL);
  const Placer placer(o, placement_exponent);
  const std::vector<double> shares = PartitionShares(o.partitions_per_topic, load_exponent);
  double topic_scale = 1;
  int64_t topic_start = 0;
  for (int64_t p = 0; p < o.partitions; ++p) {
    PartitionInfo info;
    info.topic = fmt::format("topic-{}", p / o.partitions_per_topic);
    info.partition = static_cast<int32_t>(p % o.partitions_per_topic);
    if (info.partition == 0) {
      topic_scale = Uniform(load_rng, 0.5, 1.5);
      topic_start = static_cast<int64_t>(place_rng() % static_cast<uint64_t>(o.brokers));
    }
    info.load.bytes_in = o.mean_bytes_in * topic_scale * shares[info.partition];
    info.load.bytes_out = info.load.bytes_in * o.fan_out;
    info.load.messages_in = info.load.bytes_in / 1000;
    info.load.size =
        static_cast<int64_t>(static_cast<double>(o.mean_size) * Uniform(load_rng, 0.5, 1.5));
    for (int32_t b : placer.Place(topic_start + info.partition, place_rng)) {
      info.replicas.push_back(NodeId(b + 1));
    }
    info.leader = info.replicas.front();
    info.isr = info.replicas;
    model.AddPartition(std::move(info));
  }
  return model;
}

}  // namespace

double MaxOverAverage(const ClusterModel& model, double (*value)(const BrokerLoad&)) {
  double sum = 0, max = 0;
  int32_t n = 0;
  for (int32_t b = 0; b < model.broker_count(); ++b) {
    if (model.broker(b).status != BrokerStatus::kActive) continue;
    const double v = value(model.load(b));
    sum += v;
    max = std::max(max, v);
    n++;
  }
  return n == 0 || sum == 0 ? 0 : max / (sum / n);
}

Result<ClusterModel> SynthesizeCluster(const SimulationOptions& options) {
  STRATA_ASSIGN_OR_RETURN(double load, ParseZipf(options.skew, "uniform", "--skew"));
  STRATA_ASSIGN_OR_RETURN(double placement,
                          ParseZipf(options.placement, "round_robin", "--placement"));
  return Build(options, load, placement);
}

Result<SimulationReport> Simulate(const SimulationOptions& options) {
  auto network_in = [](const BrokerLoad& l) { return l.network_in; };
  STRATA_ASSIGN_OR_RETURN(ClusterModel model, SynthesizeCluster(options));
  SimulationReport report;
  report.network_in_before = MaxOverAverage(model, network_in);
  {
    SimulationOptions rr = options;
    rr.placement = "round_robin";
    STRATA_ASSIGN_OR_RETURN(ClusterModel baseline, SynthesizeCluster(rr));
    report.network_in_round_robin = MaxOverAverage(baseline, network_in);
  }
  report.plan = MakePlan(model, options.planner);
  for (const Move& m : report.plan.moves) {
    if (m.kind == MoveKind::kLeadership) {
      report.leadership_moves++;
    } else {
      report.replica_moves++;
    }
  }
  // Moves change placement, not sizes.
  int64_t moved_bytes = 0;
  {
    std::map<std::pair<std::string, int32_t>, int64_t> size_of;
    for (size_t p = 0; p < model.partition_count(); ++p) {
      size_of[{model.partition(p).topic, model.partition(p).partition}] =
          model.partition(p).load.size;
    }
    for (const Move& m : report.plan.moves) {
      if (m.kind == MoveKind::kReplica) moved_bytes += size_of[{m.topic, m.partition}];
    }
  }
  report.bytes_to_move = moved_bytes;
  report.network_in_after = MaxOverAverage(model, network_in);
  return report;
}

std::string FormatReport(const SimulationOptions& o, const SimulationReport& r, bool json) {
  if (json) {
    const nlohmann::json goals = GoalsToJson(r.plan.goals);
    nlohmann::json doc = {{"brokers", o.brokers},
                          {"partitions", o.partitions},
                          {"racks", o.racks},
                          {"replication_factor", o.replication_factor},
                          {"skew", o.skew},
                          {"placement", o.placement},
                          {"seed", o.seed},
                          {"plan_ms", r.plan.plan_ms},
                          {"leadership_moves", r.leadership_moves},
                          {"replica_moves", r.replica_moves},
                          {"bytes_to_move", r.bytes_to_move},
                          {"network_in_max_over_avg",
                           {{"before", r.network_in_before},
                            {"after", r.network_in_after},
                            {"round_robin", r.network_in_round_robin}}},
                          {"violations", r.plan.violations},
                          {"goals", goals}};
    return doc.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "{} brokers, {} partitions x {} replicas, {} racks, load skew {}, placement {}, seed {}\n"
      "plan: {:.0f} ms, {} leadership moves, {} replica moves, {:.1f} GiB of local data on the "
      "moved replicas\nnetwork in max/avg: {:.3f} before, {:.3f} after (round robin: {:.3f})\n",
      o.brokers, o.partitions, o.replication_factor, o.racks, o.skew, o.placement, o.seed,
      r.plan.plan_ms, r.leadership_moves, r.replica_moves,
      static_cast<double>(r.bytes_to_move) / (1 << 30), r.network_in_before, r.network_in_after,
      r.network_in_round_robin);
  out += fmt::format("{:<22} {:>14} {:>14} {:>14} {:>6}\n", "goal", "average", "max before",
                     "max after", "moves");
  for (const GoalSummary& g : r.plan.goals) {
    out += fmt::format("{:<22} {:>14.1f} {:>14.1f} {:>14.1f} {:>6}\n", g.goal, g.average,
                       g.max_before, g.max_after, g.moves);
  }
  for (const std::string& v : r.plan.violations) out += "violation: " + v + "\n";
  return out;
}

}  // namespace strata::balancer
