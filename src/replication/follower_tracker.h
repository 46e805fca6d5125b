#pragma once
// FollowerTracker: what a partition's leader knows of its followers, from
// their fetches, and the decisions that follow from it (Kafka's Partition
// and Replica state): the high watermark, which followers may join the ISR
// and which have fallen out of it.
//
// A follower's fetch at offset O says its log ends at O. It is caught up
// when O reached the leader's log end at that fetch, or, failing that, the
// leader's log end at its previous fetch (then it was caught up as of the
// previous fetch): Kafka's lastCaughtUpTimeMs rule, so a follower that keeps
// up with a busy leader is never judged lagging.
//
// Thread-safety: none; the owning Partition serialises calls.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "base/ids.h"
#include "base/offset.h"

namespace strata::replication {

struct FollowerState {
  Offset log_end_offset = kNoOffset;  // kNoOffset until its first fetch as our follower
  int64_t last_caught_up_ms = 0;
  int64_t last_fetch_ms = 0;
  Offset leader_end_at_last_fetch = kNoOffset;
  Offset log_start_offset = kNoOffset;  // its local log start, as its last fetch said
  // The follower's broker epoch (registration) when it last fetched; 0:
  // it was not registered; -1: not fetched yet.
  int64_t broker_epoch = -1;
};

class FollowerTracker {
 public:
  // A new leadership: followers start unknown, and every ISR member counts
  // as caught up now (it gets replica.lag.time.max.ms to fetch).
  void Reset(NodeId self, const std::vector<NodeId>& replicas, const std::vector<NodeId>& isr,
             int64_t now_ms);

  // The same leadership with another replica set (a reassignment adds or
  // removes replicas): new followers start unknown and not caught up, the
  // others keep what is known of them.
  void UpdateReplicas(const std::vector<NodeId>& replicas);

  // A fetch by `follower` at `fetch_offset` while the leader's log ended at
  // `leader_end`; `log_start` is the follower's local log start (kNoOffset
  // when the fetch did not say). Ignored for brokers that are not replicas,
  // and when `fetch_offset` is past `leader_end`: the leader answers that
  // fetch OFFSET_OUT_OF_RANGE, and a follower recorded as holding records
  // the leader has not written yet would stop holding the high watermark
  // back (the next appends would commit without it). `broker_epoch`: the follower's registration at
  // the fetch (0: none).
  void OnFetch(NodeId follower, Offset fetch_offset, Offset leader_end, int64_t now_ms,
               Offset log_start = kNoOffset, int64_t broker_epoch = 0);

  // Forgets what followers said before they registered again (KIP-903's
  // concern): `current_epoch(id)` is the follower's registration now (0:
  // none). A follower that restarted may have lost what it had (unflushed
  // records, or its whole disk), so its old log end must neither count
  // toward the high watermark nor take it into the ISR, and its old log
  // start must not clear its contiguity flag; it is unknown until it
  // fetches again. Its last caught-up time stays (the lag rule still
  // applies to an ISR member).
  void ForgetRestarted(const std::function<int64_t(NodeId)>& current_epoch);

  std::optional<FollowerState> Get(NodeId follower) const;

  // The high watermark the ISR allows: the smallest log end over the ISR
  // (the leader's own is `leader_end`), or nullopt while the ISR is smaller
  // than `min_isr` (KIP-966: nothing is committed then). Never below
  // `current`: the caller keeps it monotonic.
  std::optional<Offset> HighWatermark(const std::vector<NodeId>& isr, Offset leader_end,
                                      int min_isr, Offset current) const;

  // Followers outside the ISR whose log reached `high_watermark` and the
  // start of the leader's epoch (so they hold everything it committed).
  std::vector<NodeId> ReadyToJoin(const std::vector<NodeId>& isr, Offset high_watermark,
                                  Offset leader_epoch_start) const;
  // Remote contiguity: `current` (the record's non-contiguous replicas)
  // updated with what fetches showed this leadership. A follower whose
  // local log starts at or below `bound` (remote log end + 1, or the
  // partition's log start when that is higher) joins up with remote
  // storage; one that has not fetched yet keeps its flag. Replica order.
  std::vector<NodeId> NonContiguous(const std::vector<NodeId>& replicas,
                                    const std::vector<NodeId>& current, Offset bound) const;
  // ISR members (not the leader) not caught up for longer than `max_lag_ms`.
  std::vector<NodeId> Lagging(const std::vector<NodeId>& isr, int64_t now_ms,
                              int64_t max_lag_ms) const;

 private:
  NodeId self_{-1};
  std::map<NodeId, FollowerState> followers_;
};

}  // namespace strata::replication
