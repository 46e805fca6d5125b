#include "broker/reassignment_progress.h"

#include <algorithm>

#include "broker/logger.h"

namespace strata::broker {

namespace {

constexpr int64_t kLogEveryMs = 10000;

bool Has(const std::vector<cluster::NodeId>& ids, cluster::NodeId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

double MiB(int64_t bytes) { return double(bytes) / double(1 << 20); }

}  // namespace

ReplicaCopyProgress ReassignmentProgress::Measure(const Partition& p,
                                                  const cluster::PartitionRecord& state,
                                                  cluster::NodeId replica, int64_t now_ms) {
  ReplicaCopyProgress out;
  out.tp = p.tp();
  out.replica = replica;
  for (cluster::NodeId r : state.replicas) {
    if (!Has(state.removing, r)) out.target.push_back(r);
  }
  out.in_isr = Has(state.isr, replica);
  out.contiguous = cluster::RemoteContiguous(state, replica);
  const auto& log = p.log();
  out.leader_end_offset = log->log_end_offset();
  auto f = p.Follower(replica);
  if (f && f->log_end_offset >= 0_o) {
    out.start_offset = f->log_start_offset >= 0_o ? f->log_start_offset : log->log_start_offset();
    out.copied_offset = f->log_end_offset;
    const Offset from = std::max(out.start_offset, log->log_start_offset());
    out.bytes_total = log->ApproximateBytesBetween(from, out.leader_end_offset);
    out.bytes_copied =
        std::min(out.bytes_total, log->ApproximateBytesBetween(from, out.copied_offset));
  }
  Rate& rate = rates_[out.tp.ToString() + "/" + std::to_string(replica.value())];
  if (rate.ms > 0 && now_ms > rate.ms) {
    double now = double(std::max<int64_t>(0, out.bytes_copied - rate.bytes)) * 1000.0 /
                 double(now_ms - rate.ms);
    rate.per_second = rate.per_second == 0 ? now : 0.7 * rate.per_second + 0.3 * now;
  }
  rate.ms = now_ms;
  rate.bytes = out.bytes_copied;
  out.bytes_per_second = rate.per_second;
  const int64_t left = out.bytes_total - out.bytes_copied;
  if (left <= 0) {
    out.eta_seconds = 0;
  } else if (rate.per_second > 0) {
    out.eta_seconds = static_cast<int64_t>(double(left) / rate.per_second + 0.5);
  }
  return out;
}

void ReassignmentProgress::Update(const std::vector<std::shared_ptr<Partition>>& led,
                                  int64_t now_ms) {
  std::vector<ReplicaCopyProgress> next;
  std::lock_guard lock(mu_);
  std::map<std::string, Rate> kept;
  for (const auto& p : led) {
    cluster::PartitionRecord state = p->state();
    for (cluster::NodeId r : state.adding) {
      next.push_back(Measure(*p, state, r, now_ms));
      std::string key = p->tp().ToString() + "/" + std::to_string(r.value());
      kept[key] = rates_[key];
    }
  }
  rates_ = std::move(kept);  // finished reassignments leave
  current_ = std::move(next);
  if (current_.empty() || now_ms - last_log_ms_ < kLogEveryMs) return;
  last_log_ms_ = now_ms;
  for (const auto& c : current_) {
    if (c.in_isr) continue;
    Log()->info(
        "{}: reassignment to [{}]: replica {} copied {:.1f} of {:.1f} MiB ({:.1f} MiB/s, "
        "ETA {}){}",
        c.tp.ToString(), cluster::JoinIds(c.target), c.replica.value(), MiB(c.bytes_copied),
        MiB(c.bytes_total), MiB(int64_t(c.bytes_per_second)),
        c.eta_seconds < 0 ? std::string("unknown") : std::to_string(c.eta_seconds) + " s",
        !c.contiguous && c.copied_offset >= c.leader_end_offset
            ? "; caught up, waiting for remote storage to reach its log start"
            : "");
  }
}

std::vector<ReplicaCopyProgress> ReassignmentProgress::Snapshot() const {
  std::lock_guard lock(mu_);
  return current_;
}

}  // namespace strata::broker
