#include "balancer/plan_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "base/check.h"

namespace strata::balancer {

namespace {

// Where brokers declare a capacity, the traffic floor is at most this share
// of it.
constexpr double kFloorCapacityShare = 0.1;

// How far v is outside a goal's target (half its band): what a later
// goal's move may not increase, so the balance an earlier goal reached
// holds to the end of the plan.
double Distance(const Band& band, double v) {
  return std::max(0.0, v - band.target_hi) + std::max(0.0, band.target_lo - v);
}

const Metric kMetrics[] = {
    {kGoalNetworkIn, [](const BrokerLoad& l) { return l.network_in; },
     [](const PartitionInfo& p, bool) { return p.load.bytes_in; }, nullptr, true,
     [](const BrokerCapacity& c) { return c.network_in; }},
    {kGoalNetworkOut, [](const BrokerLoad& l) { return l.network_out; },
     [](const PartitionInfo& p, bool leader) {
       return leader ? ClusterModel::LeaderNetworkOut(p) : 0.0;
     },
     [](const PartitionInfo& p) { return ClusterModel::LeaderNetworkOut(p); }, true,
     [](const BrokerCapacity& c) { return c.network_out; }},
    {kGoalLeaderCount, [](const BrokerLoad& l) { return static_cast<double>(l.leaders); },
     [](const PartitionInfo&, bool leader) { return leader ? 1.0 : 0.0; },
     [](const PartitionInfo&) { return 1.0; }, false},
    {kGoalLeaderBytesIn, [](const BrokerLoad& l) { return l.leader_bytes_in; },
     [](const PartitionInfo& p, bool leader) { return leader ? p.load.bytes_in : 0.0; },
     [](const PartitionInfo& p) { return p.load.bytes_in; }, true,
     [](const BrokerCapacity& c) { return c.network_in; }},
};

}  // namespace

const Metric* FindMetric(const std::string& goal) {
  for (const Metric& m : kMetrics) {
    if (goal == m.goal) return &m;
  }
  return nullptr;
}

double MoveShare(const Metric& metric, const PartitionInfo& p, MoveKind kind, NodeId from) {
  if (kind == MoveKind::kLeadership) return metric.leader_share ? metric.leader_share(p) : 0;
  return metric.replica_share(p, p.leader == from);
}

std::string FormatFigure(const Metric& metric, double value) {
  if (!metric.network) return fmt::format("{:.0f}", value);
  return fmt::format("{:.2f} MB/s", value / 1e6);
}

double PlanContext::TrafficFloor(const Metric& metric) const {
  if (!metric.network) return 0;
  double floor = options_.network_floor;
  if (metric.capacity == nullptr || active_.empty()) return floor;
  double sum = 0;
  for (int32_t b : active_) {
    const double c = metric.capacity(model_.broker(b).capacity);
    if (c <= 0) return floor;  // a broker without a declared capacity
    sum += c;
  }
  return std::min(floor, kFloorCapacityShare * sum / static_cast<double>(active_.size()));
}

PlanContext::PlanContext(ClusterModel& model, const PlannerOptions& options)
    : model_(model), options_(options) {
  std::set<std::string> racks;
  bool all_racked = true;
  active_flag_.assign(model.broker_count(), false);
  for (int32_t b = 0; b < model.broker_count(); ++b) {
    if (model.broker(b).status != BrokerStatus::kActive) continue;
    active_.push_back(b);
    active_flag_[b] = true;
    if (model.broker(b).rack.empty()) all_racked = false;
    racks.insert(model.broker(b).rack);
  }
  // Kafka's rule: racks count only when every broker has one.
  racks_ = all_racked && racks.size() > 1 ? static_cast<int32_t>(racks.size()) : 0;
  moves_on_.assign(model.partition_count(), 0);
  cooling_.assign(model.partition_count(), false);
  if (!options.cooling.empty()) {
    for (size_t p = 0; p < model.partition_count(); ++p) {
      const PartitionInfo& info = model.partition(p);
      cooling_[p] = options.cooling.count({info.topic, info.partition}) > 0;
    }
  }
}

bool PlanContext::IsActive(int32_t b) const { return b >= 0 && active_flag_[b]; }

bool PlanContext::Movable(size_t p) const { return !cooling_[p] && !model_.partition(p).frozen; }

bool PlanContext::Holds(size_t p, int32_t b) const {
  const auto& replicas = model_.partition(p).replicas;
  return std::find(replicas.begin(), replicas.end(), model_.broker(b).id) != replicas.end();
}

bool PlanContext::CapReached() const {
  return options_.max_moves > 0 && partitions_moved_ >= options_.max_moves;
}

int32_t PlanContext::ReplicasOnRack(size_t p, const std::string& rack, int32_t except) const {
  int32_t n = 0;
  for (NodeId r : model_.partition(p).replicas) {
    const int32_t b = model_.IndexOf(r);
    if (b >= 0 && b != except && model_.broker(b).rack == rack) n++;
  }
  return n;
}

int32_t PlanContext::MaxPerRack(size_t replication_factor) const {
  if (racks_ == 0) return static_cast<int32_t>(replication_factor);
  return static_cast<int32_t>((replication_factor + racks_ - 1) / racks_);
}

bool PlanContext::CanHost(size_t p, int32_t from, int32_t to, std::string* why) const {
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (!IsActive(to)) return no("not an active broker");
  const PartitionInfo& info = model_.partition(p);
  const NodeId id = model_.broker(to).id;
  if (std::find(info.replicas.begin(), info.replicas.end(), id) != info.replicas.end()) {
    return no("holds a replica already");
  }
  const BrokerLoad& load = model_.load(to);
  if (load.replicas + 1 > options_.max_replicas_per_broker) return no("at its replica cap");
  const int64_t disk = model_.broker(to).capacity.disk;
  if (disk > 0 && static_cast<double>(load.disk + info.load.size) >
                      options_.disk_cap_ratio * static_cast<double>(disk)) {
    return no("at its disk cap");
  }
  if (racks_ > 0 &&
      ReplicasOnRack(p, model_.broker(to).rack, from) + 1 > MaxPerRack(info.replicas.size())) {
    return no("its rack holds enough replicas");
  }
  return true;
}

bool PlanContext::KeepsOptimized(size_t p, MoveKind kind, int32_t from, int32_t to) const {
  const PartitionInfo& info = model_.partition(p);
  for (const Band& band : optimized_) {
    const double share = MoveShare(*band.metric, info, kind, model_.broker(from).id);
    if (share == 0) continue;
    const double src = band.metric->value(model_.load(from));
    const double dst = band.metric->value(model_.load(to));
    // Each end may be outside the target only by coming closer to it.
    const double src_after = src - share, dst_after = dst + share;
    if (Distance(band, src_after) > 0 && Distance(band, src_after) > Distance(band, src)) {
      return false;
    }
    if (Distance(band, dst_after) > 0 && Distance(band, dst_after) > Distance(band, dst)) {
      return false;
    }
  }
  return true;
}

Move PlanContext::StartMove(size_t p, MoveKind kind, int32_t from, int32_t to) const {
  const PartitionInfo& info = model_.partition(p);
  Move m;
  m.kind = kind;
  m.topic = info.topic;
  m.partition = info.partition;
  m.replicas_before = info.replicas;
  m.leader_before = info.leader;
  m.from = model_.broker(from).id;
  m.to = model_.broker(to).id;
  return m;
}

void PlanContext::Record(size_t p, Move m, const char* goal, std::string reason) {
  m.goal = goal;
  m.reason = std::move(reason);
  plan_.moves.push_back(std::move(m));
  move_partitions_.push_back(p);
  if (moves_on_[p]++ == 0) partitions_moved_++;
}

void PlanContext::MoveReplica(size_t p, int32_t from, int32_t to, const char* goal,
                              std::string reason) {
  Move m = StartMove(p, MoveKind::kReplica, from, to);
  model_.MoveReplica(p, m.from, m.to);
  m.replicas_after = model_.partition(p).replicas;
  m.leader_after = model_.partition(p).leader;
  Record(p, std::move(m), goal, std::move(reason));
}

void PlanContext::MoveLeader(size_t p, int32_t from, int32_t to, const char* goal,
                             std::string reason) {
  Move m = StartMove(p, MoveKind::kLeadership, from, to);
  model_.MoveLeader(p, m.to);
  // The new leader first: the preferred replica, which a preferred
  // election then makes leader (Kafka's way of moving leadership).
  m.replicas_after = model_.partition(p).replicas;
  auto leader = std::find(m.replicas_after.begin(), m.replicas_after.end(), m.to);
  std::rotate(m.replicas_after.begin(), leader, leader + 1);
  m.leader_after = m.to;
  Record(p, std::move(m), goal, std::move(reason));
}

void PlanContext::UndoLast() {
  STRATA_CHECK(!plan_.moves.empty(), "no move to undo");
  const Move m = std::move(plan_.moves.back());
  plan_.moves.pop_back();
  const size_t p = move_partitions_.back();
  move_partitions_.pop_back();
  if (m.kind == MoveKind::kReplica) {
    model_.MoveReplica(p, m.to, m.from);
  } else {
    model_.MoveLeader(p, m.from);
  }
  if (--moves_on_[p] == 0) partitions_moved_--;
}

std::vector<Move> PlanContext::MergedMoves() const {
  std::vector<Move> out;
  std::vector<int64_t> slot(model_.partition_count(), -1);
  for (size_t i = 0; i < plan_.moves.size(); ++i) {
    const Move& m = plan_.moves[i];
    const size_t p = move_partitions_[i];
    if (slot[p] < 0) {
      slot[p] = static_cast<int64_t>(out.size());
      out.push_back(m);
      continue;
    }
    Move& merged = out[slot[p]];
    if (m.kind == MoveKind::kReplica) merged.kind = MoveKind::kReplica;
    merged.to = m.to;
    merged.leader_after = m.leader_after;
    merged.replicas_after = m.replicas_after;
    merged.reason += "; " + m.goal + ": " + m.reason;
  }
  std::vector<Move> kept;
  for (Move& m : out) {
    // The leader first, so a preferred election after the reassignment
    // leaves leadership where the plan put it.
    auto leader = std::find(m.replicas_after.begin(), m.replicas_after.end(), m.leader_after);
    if (leader != m.replicas_after.end()) std::rotate(m.replicas_after.begin(), leader, leader + 1);
    if (m.replicas_after == m.replicas_before && m.leader_after == m.leader_before) continue;
    kept.push_back(std::move(m));
  }
  return kept;
}

}  // namespace strata::balancer
