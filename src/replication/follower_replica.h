#pragma once
// FollowerReplica: a replica on this broker that a ReplicaFetcher fills from
// its leader, as the fetcher sees it. Every write the fetcher makes goes
// through it (broker::Partition implements it), so the replica's high
// watermark, traffic counters and waiters move with its log instead of
// beside it. Each write names the leadership it was fetched under and is
// refused (kFenced) once the replica follows a newer one or leads: an answer
// still in flight when the leader changed never reaches the log.
//
// Thread-safety: called from the fetcher's thread while the broker's other
// threads read the replica; implementations lock what they share.
#include <cstdint>
#include <utility>
#include <vector>

#include "base/bytes.h"
#include "base/ids.h"
#include "base/offset.h"
#include "base/result.h"
#include "storage/log.h"

namespace strata::replication {

class FollowerReplica {
 public:
  virtual ~FollowerReplica() = default;

  // What the next fetch asks from and tells the leader.
  virtual Offset log_end_offset() const = 0;
  virtual Offset log_start_offset() const = 0;
  // The epoch of the last batch in the log; kNoLeaderEpoch when it has none.
  virtual LeaderEpoch latest_epoch() const = 0;
  // The largest epoch <= `epoch` in the log and where it ends
  // (Log::EndOffsetForEpoch); {kNoLeaderEpoch, kNoOffset} when there is none.
  virtual std::pair<LeaderEpoch, Offset> EndOffsetForEpoch(LeaderEpoch epoch) const = 0;

  // Appends the leader's batches verbatim (CRCs checked by the caller;
  // `infos` describes them) and counts them as replication traffic.
  virtual Status AppendAsFollower(LeaderEpoch fetched_under, MutableByteView batches,
                                  const std::vector<storage::BatchInfo>& infos) = 0;
  // Truncates to `offset` where the log diverges from the leader's
  // (KIP-320); the high watermark goes no higher than the new end.
  virtual Status TruncateTo(LeaderEpoch fetched_under, Offset offset) = 0;
  // Empties the log and starts it at `offset`, the leader's log start or
  // where it said a tiered replica starts; `epoch_at`: the leader epoch of
  // the records there (kNoLeaderEpoch: unknown).
  virtual Status StartLogAt(LeaderEpoch fetched_under, Offset offset,
                            LeaderEpoch epoch_at = kNoLeaderEpoch) = 0;
  // Deletes the records below `offset` (a log started below its leader's
  // log start to take a whole batch).
  virtual Status DeleteRecordsBefore(LeaderEpoch fetched_under, Offset offset) = 0;
  // After each fetch of the partition that was not an error: the leader's
  // high watermark and log start offset.
  virtual void OnLeaderFetched(LeaderEpoch fetched_under, Offset high_watermark,
                               Offset log_start) = 0;
};

}  // namespace strata::replication
