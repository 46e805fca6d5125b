#include "replication/follower_tracker.h"

#include <algorithm>

namespace strata::replication {

void FollowerTracker::Reset(NodeId self, const std::vector<NodeId>& replicas,
                            const std::vector<NodeId>& isr, int64_t now_ms) {
  self_ = self;
  followers_.clear();
  for (NodeId r : replicas) {
    if (r == self) continue;
    FollowerState s;
    bool in_sync = std::find(isr.begin(), isr.end(), r) != isr.end();
    s.last_caught_up_ms = in_sync ? now_ms : 0;
    followers_[r] = s;
  }
}

void FollowerTracker::UpdateReplicas(const std::vector<NodeId>& replicas) {
  std::erase_if(followers_, [&](const auto& kv) {
    return std::find(replicas.begin(), replicas.end(), kv.first) == replicas.end();
  });
  for (NodeId r : replicas) {
    if (r != self_) followers_.try_emplace(r);
  }
}

void FollowerTracker::OnFetch(NodeId follower, Offset fetch_offset, Offset leader_end,
                              int64_t now_ms, Offset log_start, int64_t broker_epoch) {
  auto it = followers_.find(follower);
  if (it == followers_.end() || fetch_offset > leader_end) return;
  FollowerState& s = it->second;
  if (s.broker_epoch >= 0 && s.broker_epoch != broker_epoch) {
    // Another incarnation: nothing it said before holds.
    s.log_start_offset = kNoOffset;
    s.leader_end_at_last_fetch = kNoOffset;
  }
  s.broker_epoch = broker_epoch;
  if (fetch_offset >= leader_end) {
    s.last_caught_up_ms = std::max(s.last_caught_up_ms, now_ms);
  } else if (s.leader_end_at_last_fetch >= 0_o && fetch_offset >= s.leader_end_at_last_fetch) {
    s.last_caught_up_ms = std::max(s.last_caught_up_ms, s.last_fetch_ms);
  }
  s.log_end_offset = fetch_offset;
  if (log_start >= 0_o) s.log_start_offset = log_start;
  s.leader_end_at_last_fetch = leader_end;
  s.last_fetch_ms = now_ms;
}

void FollowerTracker::ForgetRestarted(const std::function<int64_t(NodeId)>& current_epoch) {
  for (auto& [id, s] : followers_) {
    if (s.broker_epoch < 0 || s.broker_epoch == current_epoch(id)) continue;
    const int64_t caught_up = s.last_caught_up_ms;
    s = FollowerState{};
    s.last_caught_up_ms = caught_up;
  }
}

std::optional<FollowerState> FollowerTracker::Get(NodeId follower) const {
  auto it = followers_.find(follower);
  if (it == followers_.end()) return std::nullopt;
  return it->second;
}

std::optional<Offset> FollowerTracker::HighWatermark(const std::vector<NodeId>& isr,
                                                     Offset leader_end, int min_isr,
                                                     Offset current) const {
  if (static_cast<int>(isr.size()) < min_isr) return std::nullopt;
  Offset hw = leader_end;
  for (NodeId r : isr) {
    if (r == self_) continue;
    auto it = followers_.find(r);
    // An ISR member not heard from yet (a new leadership) holds the mark
    // where it is: it may have less than the leader.
    Offset end = it == followers_.end() ? kNoOffset : it->second.log_end_offset;
    if (end < 0_o) return std::nullopt;
    hw = std::min(hw, end);
  }
  return std::max(hw, current);
}

std::vector<NodeId> FollowerTracker::ReadyToJoin(const std::vector<NodeId>& isr,
                                                 Offset high_watermark,
                                                 Offset leader_epoch_start) const {
  std::vector<NodeId> out;
  for (const auto& [id, s] : followers_) {
    if (std::find(isr.begin(), isr.end(), id) != isr.end()) continue;
    if (s.log_end_offset >= high_watermark && s.log_end_offset >= leader_epoch_start) {
      out.push_back(id);
    }
  }
  return out;
}

std::vector<NodeId> FollowerTracker::NonContiguous(const std::vector<NodeId>& replicas,
                                                   const std::vector<NodeId>& current,
                                                   Offset bound) const {
  std::vector<NodeId> out;
  for (NodeId r : replicas) {
    if (r == self_) continue;  // the leader's own log is what it uploads from
    auto it = followers_.find(r);
    bool flagged = std::find(current.begin(), current.end(), r) != current.end();
    if (it != followers_.end() && it->second.log_end_offset >= 0_o &&
        it->second.log_start_offset >= 0_o) {
      flagged = it->second.log_start_offset > bound;
    }
    if (flagged) out.push_back(r);
  }
  return out;
}

std::vector<NodeId> FollowerTracker::Lagging(const std::vector<NodeId>& isr, int64_t now_ms,
                                             int64_t max_lag_ms) const {
  std::vector<NodeId> out;
  for (NodeId r : isr) {
    if (r == self_) continue;
    auto it = followers_.find(r);
    int64_t caught_up = it == followers_.end() ? 0 : it->second.last_caught_up_ms;
    if (now_ms - caught_up > max_lag_ms) out.push_back(r);
  }
  return out;
}

}  // namespace strata::replication
