#include "balancer/scaling.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace strata::balancer {

namespace {

using cluster::NodeId;

// One capacity dimension: a broker's load and its declared capacity.
struct Dimension {
  const char* name;
  double (*used)(const ClusterModel& m, int32_t b);
  double (*capacity)(const BrokerInfo& b);
};

constexpr std::array<Dimension, 4> kDimensions{{
    {"network_in", [](const ClusterModel& m, int32_t b) { return m.load(b).network_in; },
     [](const BrokerInfo& b) { return b.capacity.network_in; }},
    {"network_out", [](const ClusterModel& m, int32_t b) { return m.load(b).network_out; },
     [](const BrokerInfo& b) { return b.capacity.network_out; }},
    {"cpu", [](const ClusterModel& m, int32_t b) { return m.broker(b).cpu_used; },
     [](const BrokerInfo& b) { return b.capacity.cpu; }},
    {"disk", [](const ClusterModel& m, int32_t b) { return static_cast<double>(m.load(b).disk); },
     [](const BrokerInfo& b) { return static_cast<double>(b.capacity.disk); }},
}};

// Brokers whose capacity counts: those that hold load and may keep it.
bool Serving(BrokerStatus s) { return s == BrokerStatus::kActive || s == BrokerStatus::kStale; }

// The utilization with broker index `without` (-1: none) taken out of the
// capacity; the load stays (it would move to the others).
double UtilizationWithout(const ClusterModel& m, int32_t without, std::string* dimension) {
  double best = -1;
  for (const Dimension& d : kDimensions) {
    double used = 0, capacity = 0;
    bool declared = true;
    for (int32_t b = 0; b < m.broker_count(); ++b) {
      used += d.used(m, b);
      if (!Serving(m.broker(b).status) || b == without) continue;
      const double c = d.capacity(m.broker(b));
      if (c <= 0) declared = false;
      capacity += c;
    }
    if (!declared || capacity <= 0) continue;
    const double u = used / capacity;
    if (u > best) {
      best = u;
      if (dimension != nullptr) *dimension = d.name;
    }
  }
  return best;
}

std::string Percent(double u) { return fmt::format("{:.1f} %", u * 100); }

// A standby broker to activate: the lowest id.
int32_t PickStandby(const ClusterModel& m) {
  for (int32_t b = 0; b < m.broker_count(); ++b) {
    if (m.broker(b).status == BrokerStatus::kStandby) return b;
  }
  return -1;
}

// The active broker the cluster needs least: one scaling activated (it was
// a standby machine), the highest id first; else the one carrying the
// least traffic, the highest id on a tie.
int32_t PickToDrain(const ClusterModel& m, const cluster::ScalingRoles& roles) {
  int32_t best = -1;
  auto key = [&](int32_t b) {
    const bool activated = roles.activated.count(m.broker(b).id) > 0;
    return std::make_tuple(!activated, m.load(b).network_in + m.load(b).network_out,
                           -m.broker(b).id.value());
  };
  for (int32_t b = 0; b < m.broker_count(); ++b) {
    if (m.broker(b).status != BrokerStatus::kActive) continue;
    if (best < 0 || key(b) < key(best)) best = b;
  }
  return best;
}

int32_t LargestReplicationFactor(const ClusterModel& m) {
  size_t rf = 0;
  for (size_t p = 0; p < m.partition_count(); ++p)
    rf = std::max(rf, m.partition(p).replicas.size());
  return static_cast<int32_t>(rf);
}

// Drains that are done: the broker holds nothing and goes back to standby.
bool FinishDrains(const ClusterModel& m, ScalingDecision& d) {
  for (NodeId id : d.roles.draining) {
    const int32_t b = m.IndexOf(id);
    if (b >= 0 && !m.ReplicasOn(b).empty()) continue;
    d.roles.draining.erase(id);
    if (d.roles.activated.erase(id) == 0) d.roles.retired.insert(id);
    d.event = ScalingEvent::kScaleIn;
    d.broker = id;
    d.reason = fmt::format("broker {} is drained (holds no replica): back to standby", id);
    return true;
  }
  return false;
}

// Why no broker may be drained now; empty when one may.
std::string ScaleInBlocker(const ClusterModel& m, const cluster::ScalingRoles& roles,
                           const ScalingOptions& o) {
  if (!roles.draining.empty()) return "a broker is draining already";
  int32_t active = 0;
  for (int32_t b = 0; b < m.broker_count(); ++b) {
    const BrokerStatus s = m.broker(b).status;
    if (s == BrokerStatus::kActive) active++;
    if (s == BrokerStatus::kStale || s == BrokerStatus::kDead) {
      return fmt::format("broker {} is {}", m.broker(b).id, BrokerStatusName(s));
    }
  }
  const int32_t floor = std::max(o.min_active_brokers, LargestReplicationFactor(m));
  if (active - 1 < floor) {
    return fmt::format("{} active brokers, and at least {} must stay", active, floor);
  }
  return "";
}

}  // namespace

const char* ScalingEventName(ScalingEvent e) {
  switch (e) {
    case ScalingEvent::kNone:
      return "none";
    case ScalingEvent::kScaleOut:
      return "scale_out";
    case ScalingEvent::kDrainCanceled:
      return "drain_canceled";
    case ScalingEvent::kStandbyWanted:
      return "standby_wanted";
    case ScalingEvent::kDrainStarted:
      return "drain_started";
    case ScalingEvent::kScaleIn:
      return "scale_in";
  }
  return "?";
}

double Utilization(const ClusterModel& model, std::string* dimension) {
  return UtilizationWithout(model, -1, dimension);
}

ScalingDecision DecideScaling(const ClusterModel& m, const cluster::ScalingRoles& roles,
                              ScalingTimers& t, const ScalingOptions& o, int64_t now_ms) {
  ScalingDecision d;
  d.roles = roles;
  d.utilization = UtilizationWithout(m, -1, &d.dimension);
  if (!o.enabled) return d;
  if (FinishDrains(m, d)) return d;
  if (d.utilization < 0) {
    t = {};
    d.reason = "no capacity declared (strata.broker.capacity.*): no scaling";
    return d;
  }
  const double u = d.utilization;
  auto since = [now_ms](std::optional<int64_t>& at, bool holds) {
    if (!holds) at.reset();
    if (holds && !at) at = now_ms;
  };
  since(t.above_since_ms, u > o.scale_out_threshold);
  since(t.below_since_ms, u < o.scale_in_threshold);
  const std::string figures = fmt::format("utilization {} ({})", Percent(u), d.dimension);
  if (t.above_since_ms && now_ms - *t.above_since_ms >= o.sustain_ms) {
    const std::string why =
        fmt::format("{} above strata.balancer.scale.out.threshold {} for {} s", figures,
                    Percent(o.scale_out_threshold), (now_ms - *t.above_since_ms) / 1000);
    if (!d.roles.draining.empty()) {
      d.broker = *d.roles.draining.begin();
      d.roles.draining.erase(d.broker);
      d.event = ScalingEvent::kDrainCanceled;
      d.reason = fmt::format("{}: broker {} stops draining", why, d.broker);
      t = {};
      return d;
    }
    const int32_t standby = PickStandby(m);
    if (standby < 0) {
      if (!t.last_wanted_ms || now_ms - *t.last_wanted_ms >= o.sustain_ms) {  // once a period
        t.last_wanted_ms = now_ms;
        d.event = ScalingEvent::kStandbyWanted;
        d.reason = why + ": no standby broker is registered";
      }
      return d;
    }
    d.broker = m.broker(standby).id;
    if (d.roles.retired.erase(d.broker) == 0) d.roles.activated.insert(d.broker);
    d.event = ScalingEvent::kScaleOut;
    d.reason = fmt::format("{}: standby broker {} activated", why, d.broker);
    t = {};
    return d;
  }
  if (t.below_since_ms && now_ms - *t.below_since_ms >= o.sustain_ms) {
    const std::string blocker = ScaleInBlocker(m, d.roles, o);
    if (!blocker.empty()) {
      d.reason = fmt::format("{} below the scale-in threshold, but {}", figures, blocker);
      return d;
    }
    const int32_t b = PickToDrain(m, d.roles);
    std::string dim;
    const double after = UtilizationWithout(m, b, &dim);
    if (after >= o.scale_out_threshold) {
      d.reason = fmt::format(
          "{} below the scale-in threshold, but without broker {} it would be "
          "{} ({}), above the scale-out threshold",
          figures, m.broker(b).id, Percent(after), dim);
      return d;
    }
    d.broker = m.broker(b).id;
    d.roles.draining.insert(d.broker);
    d.event = ScalingEvent::kDrainStarted;
    d.reason = fmt::format(
        "{} below strata.balancer.scale.in.threshold {} for {} s: broker {} drains to standby "
        "({} without it)",
        figures, Percent(o.scale_in_threshold), (now_ms - *t.below_since_ms) / 1000, d.broker,
        Percent(after));
    t = {};
  }
  return d;
}

}  // namespace strata::balancer
