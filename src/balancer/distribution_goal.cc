// The planner's distribution goals (network in, network out, leader count,
// leader bytes in): brokers above the band shed load, leadership first,
// then replicas, to the least loaded brokers that can take it; then brokers
// below the band pull load from the most loaded ones. A broker being fixed
// is brought within half the band of the average, so the next cycle's
// small fluctuations leave it inside the band (the damping that keeps a
// balanced cluster still). Candidate and destination scans are bounded so
// a plan over a million partitions stays within seconds.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "balancer/plan_context.h"

namespace strata::balancer {

namespace {

constexpr int kMaxDestinationsTried = 64;
constexpr int kMaxSourcesTried = 16;
constexpr int kMaxCandidatesTried = 256;
// A broker whose moves changed its figure by less than this share of the
// average without bringing it to the target has its moves taken back:
// churn for nothing (AutoMQ's trivial change ratio).
constexpr double kTrivialChange = 0.05;

// One goal's pass: the brokers ordered by figure and each broker's
// movable partitions ordered by what moving them carries.
class DistributionPass {
 public:
  DistributionPass(PlanContext& ctx, const Metric& metric, const Band& band)
      : ctx_(ctx), m_(ctx.model()), metric_(metric), band_(band) {
    for (int32_t b : ctx.active()) {
      by_value_.insert(Key(b));
      by_rack_[m_.broker(b).rack].insert(Key(b));
    }
  }

  void Shed(int32_t b);
  void Fill(int32_t u);
  double Value(int32_t b) const { return metric_.value(m_.load(b)); }

 private:
  using Entry = std::tuple<double, NodeId, int32_t>;  // figure, id, index
  Entry Key(int32_t b) const { return {Value(b), m_.broker(b).id, b}; }
  // Candidates on b: (share, partition), largest share first.
  const std::vector<std::pair<double, size_t>>& Candidates(int32_t b);
  bool Fits(int32_t from, int32_t to, double share) const {
    return Value(to) + share <= band_.target_hi && Value(from) - share >= band_.target_lo;
  }
  void Apply(size_t p, MoveKind kind, int32_t from, int32_t to, const char* why);
  bool ShedLeadership(int32_t b);
  bool ShedReplica(int32_t b);
  bool PullLeadership(int32_t u);
  bool PullReplica(int32_t u);

  PlanContext& ctx_;
  ClusterModel& m_;
  const Metric& metric_;
  const Band band_;
  void Reindex(int32_t b, bool insert);
  // The least loaded broker that may take p's replica from b and stays
  // within the target; -1 when none. Racks are searched one by one: the
  // least loaded brokers may all be on a rack p may not use.
  int32_t Destination(size_t p, int32_t b, double share);

  std::set<Entry> by_value_;
  std::map<std::string, std::set<Entry>> by_rack_;  // the same, per rack
  std::map<int32_t, std::vector<std::pair<double, size_t>>> candidates_;
};

const std::vector<std::pair<double, size_t>>& DistributionPass::Candidates(int32_t b) {
  auto [it, added] = candidates_.try_emplace(b);
  if (!added) return it->second;
  const NodeId id = m_.broker(b).id;
  for (size_t p : m_.ReplicasOn(b)) {
    if (!ctx_.Movable(p)) continue;
    const double share = metric_.replica_share(m_.partition(p), m_.partition(p).leader == id);
    if (share > 0) it->second.emplace_back(share, p);
  }
  std::stable_sort(it->second.begin(), it->second.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  return it->second;
}

void DistributionPass::Apply(size_t p, MoveKind kind, int32_t from, int32_t to, const char* why) {
  std::string reason =
      fmt::format("broker {} {} {} {} {}", m_.broker(from).id, metric_.goal,
                  FormatFigure(metric_, Value(from)), why, FormatFigure(metric_, band_.average));
  Reindex(from, false);
  Reindex(to, false);
  if (kind == MoveKind::kLeadership) {
    ctx_.MoveLeader(p, from, to, metric_.goal, std::move(reason));
  } else {
    ctx_.MoveReplica(p, from, to, metric_.goal, std::move(reason));
  }
  Reindex(from, true);
  Reindex(to, true);
}

void DistributionPass::Reindex(int32_t b, bool insert) {
  auto& rack = by_rack_[m_.broker(b).rack];
  if (insert) {
    by_value_.insert(Key(b));
    rack.insert(Key(b));
  } else {
    by_value_.erase(Key(b));
    rack.erase(Key(b));
  }
}

int32_t DistributionPass::Destination(size_t p, int32_t b, double share) {
  int32_t best = -1;
  for (const auto& [rack, brokers] : by_rack_) {
    int tried = 0;
    for (const auto& [value, id, d] : brokers) {
      if (value + share > band_.target_hi || ++tried > kMaxDestinationsTried) break;
      if (best >= 0 && Key(d) >= Key(best)) break;
      if (d == b || !ctx_.CanHost(p, b, d)) continue;
      if (!ctx_.KeepsOptimized(p, MoveKind::kReplica, b, d)) continue;
      best = d;
      break;
    }
  }
  return best;
}

bool DistributionPass::ShedLeadership(int32_t b) {
  const NodeId id = m_.broker(b).id;
  int failed = 0;  // candidates with nowhere to go: past a bound, give up
  for (const auto& [share_at_start, p] : Candidates(b)) {
    if (Value(b) <= band_.target_hi || ctx_.CapReached()) return true;
    const PartitionInfo& info = m_.partition(p);
    if (!ctx_.Movable(p) || info.leader != id) continue;
    if (failed > kMaxCandidatesTried) break;
    const double share = metric_.leader_share(info);
    int32_t best = -1;
    for (NodeId r : info.isr) {
      const int32_t c = m_.IndexOf(r);
      if (c == b || !ctx_.IsActive(c) || !Fits(b, c, share)) continue;
      if (!ctx_.KeepsOptimized(p, MoveKind::kLeadership, b, c)) continue;
      if (best < 0 || Key(c) < Key(best)) best = c;
    }
    if (best < 0) {
      failed++;
      continue;
    }
    Apply(p, MoveKind::kLeadership, b, best, "above the average");
  }
  return Value(b) <= band_.target_hi;
}

bool DistributionPass::ShedReplica(int32_t b) {
  const NodeId id = m_.broker(b).id;
  int failed = 0;  // candidates with nowhere to go: past a bound, give up
  for (const auto& [share_at_start, p] : Candidates(b)) {
    if (Value(b) <= band_.target_hi || ctx_.CapReached()) return true;
    if (!ctx_.Movable(p) || !ctx_.Holds(p, b)) continue;
    const double share = metric_.replica_share(m_.partition(p), m_.partition(p).leader == id);
    if (share <= 0) continue;
    if (failed > kMaxCandidatesTried) break;
    if (Value(b) - share < band_.target_lo) continue;  // too big: a smaller one may do
    const int32_t to = Destination(p, b, share);
    if (to < 0) {
      failed++;
      continue;
    }
    Apply(p, MoveKind::kReplica, b, to, "above the average");
  }
  return Value(b) <= band_.target_hi;
}

void DistributionPass::Shed(int32_t b) {
  const size_t moves_before = ctx_.plan().moves.size();
  const double before = Value(b);
  if (metric_.leader_share != nullptr && ShedLeadership(b)) return;
  ShedReplica(b);
  // Moves that neither fixed the broker nor changed it much are churn.
  if (Value(b) > band_.target_hi && before - Value(b) < kTrivialChange * band_.average) {
    while (ctx_.plan().moves.size() > moves_before) {
      const Move& last = ctx_.plan().moves.back();
      const int32_t from = m_.IndexOf(last.from), to = m_.IndexOf(last.to);
      Reindex(from, false);
      Reindex(to, false);
      ctx_.UndoLast();
      Reindex(from, true);
      Reindex(to, true);
    }
  }
}

bool DistributionPass::PullLeadership(int32_t u) {
  const NodeId id = m_.broker(u).id;
  for (size_t p : m_.ReplicasOn(u)) {
    if (Value(u) >= band_.target_lo || ctx_.CapReached()) return true;
    const PartitionInfo& info = m_.partition(p);
    if (!ctx_.Movable(p) || info.leader == id) continue;
    if (std::find(info.isr.begin(), info.isr.end(), id) == info.isr.end()) continue;
    const int32_t l = m_.IndexOf(info.leader);
    if (!ctx_.IsActive(l) || Value(l) <= band_.average) continue;
    const double share = metric_.leader_share(info);
    if (share <= 0 || !Fits(l, u, share)) continue;
    if (!ctx_.KeepsOptimized(p, MoveKind::kLeadership, l, u)) continue;
    Apply(p, MoveKind::kLeadership, l, u, "above the average, to a broker below it at");
  }
  return Value(u) >= band_.target_lo;
}

bool DistributionPass::PullReplica(int32_t u) {
  // The most loaded sources first (copied: applying reorders the set).
  std::vector<int32_t> sources;
  for (auto it = by_value_.rbegin(); it != by_value_.rend(); ++it) {
    if (std::get<0>(*it) <= band_.average || static_cast<int>(sources.size()) >= kMaxSourcesTried)
      break;
    sources.push_back(std::get<2>(*it));
  }
  for (int32_t s : sources) {
    const auto& list = Candidates(s);
    // The largest share that fits: the list runs from large to small.
    const double room = std::min(band_.target_hi - Value(u), Value(s) - band_.target_lo);
    auto it = std::lower_bound(list.begin(), list.end(), room,
                               [](const auto& e, double r) { return e.first > r; });
    int failed = 0;
    for (; it != list.end() && failed <= kMaxCandidatesTried; ++it) {
      if (Value(u) >= band_.target_lo || ctx_.CapReached()) return true;
      const size_t p = it->second;
      if (!ctx_.Movable(p) || !ctx_.Holds(p, s)) continue;
      const PartitionInfo& info = m_.partition(p);
      const double share = metric_.replica_share(info, info.leader == m_.broker(s).id);
      if (share <= 0 || !Fits(s, u, share) || !ctx_.CanHost(p, s, u) ||
          !ctx_.KeepsOptimized(p, MoveKind::kReplica, s, u)) {
        failed++;
        continue;
      }
      Apply(p, MoveKind::kReplica, s, u, "above the average, to a broker below it at");
    }
  }
  return Value(u) >= band_.target_lo;
}

void DistributionPass::Fill(int32_t u) {
  if (metric_.leader_share != nullptr && PullLeadership(u)) return;
  PullReplica(u);
}

}  // namespace

Band ComputeBand(const PlanContext& ctx, const Metric& metric) {
  Band band;
  band.metric = &metric;
  double sum = 0;
  for (int32_t b : ctx.active()) sum += metric.value(ctx.model().load(b));
  band.average = ctx.active().empty() ? 0 : sum / static_cast<double>(ctx.active().size());
  const double width = ctx.options().band;
  band.lo = band.average * (1 - width);
  band.hi = band.average * (1 + width);
  band.target_lo = band.average * (1 - width / 2);
  band.target_hi = band.average * (1 + width / 2);
  return band;
}

void BalanceDistribution(PlanContext& ctx, const Metric& metric) {
  const Band band = ComputeBand(ctx, metric);
  const bool below_floor = band.average < ctx.TrafficFloor(metric);
  if (ctx.active().size() >= 2 && !below_floor) {
    DistributionPass pass(ctx, metric, band);
    // A broker outside the band triggers the goal; once triggered, every
    // broker outside the target (half the band) is brought into it.
    const bool triggered = std::any_of(ctx.active().begin(), ctx.active().end(), [&](int32_t b) {
      return pass.Value(b) > band.hi || pass.Value(b) < band.lo;
    });
    auto order = [&](bool descending) {
      std::vector<int32_t> out;
      for (int32_t b : ctx.active()) {
        const double v = pass.Value(b);
        if (triggered && (descending ? v > band.target_hi : v < band.target_lo)) out.push_back(b);
      }
      std::stable_sort(out.begin(), out.end(), [&](int32_t x, int32_t y) {
        const double vx = pass.Value(x), vy = pass.Value(y);
        if (vx != vy) return descending ? vx > vy : vx < vy;
        return ctx.model().broker(x).id < ctx.model().broker(y).id;
      });
      return out;
    };
    for (int32_t b : order(true)) {
      if (ctx.CapReached()) break;
      if (pass.Value(b) > band.target_hi) pass.Shed(b);
    }
    for (int32_t u : order(false)) {
      if (ctx.CapReached()) break;
      if (pass.Value(u) < band.target_lo) pass.Fill(u);
    }
  }
  ctx.MarkOptimized(band);
}

}  // namespace strata::balancer
