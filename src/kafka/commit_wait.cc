#include "kafka/commit_wait.h"

#include <algorithm>

namespace strata::kafka {

namespace {

// A leadership lost meanwhile (a new leader epoch, or the replica moved
// off this broker, whose last record may still name it leader) will never
// commit here: the caller is told at once, as Kafka completes such
// requests with NOT_LEADER_OR_FOLLOWER, instead of at the timeout.
bool Deposed(const CommitWait& w) {
  if (w.partition->removed()) return true;
  cluster::PartitionRecord now = w.partition->state();
  return now.leader != w.leader || now.leader_epoch != w.leader_epoch;
}

// Below the high watermark of the leadership that appended it. Once deposed,
// the replica's mark is its new leader's, over a log that may have been
// truncated below the append and filled again with other records: a mark
// past the offset then says nothing of this append, which counts as deposed
// (the client retries; an idempotent producer's retry is deduplicated).
// The mark is read first, then the leadership: leader epochs never come
// back, so a leadership that still holds after the read held during it,
// and the mark read was its own.
bool Committed(const CommitWait& w) {
  const bool passed = w.partition->high_watermark() > w.last_offset;
  return passed && !Deposed(w);
}

}  // namespace

asio::awaitable<std::vector<CommitOutcome>> AwaitCommitted(BrokerContext& ctx,
                                                           const std::vector<CommitWait>& waits,
                                                           std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<TopicPartition> partitions;
  for (const auto& w : waits) partitions.push_back(w.partition->tp());
  auto settled = [](const CommitWait& w) { return Committed(w) || Deposed(w); };
  // The notifier wakes this on a new high watermark and on a change of
  // leadership or the replica's removal (TopicManager's wake listener).
  // (Most coordinator writes on one broker are committed already.)
  while (!std::all_of(waits.begin(), waits.end(), settled)) {
    auto waiter = ctx.notifier.Register(co_await asio::this_coro::executor, partitions);
    bool all = std::all_of(waits.begin(), waits.end(), settled);
    auto now = std::chrono::steady_clock::now();
    if (!all && now < deadline) {
      co_await ctx.notifier.Wait(
          waiter, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now));
    }
    ctx.notifier.Unregister(waiter);
    if (std::chrono::steady_clock::now() >= deadline) break;
  }
  std::vector<CommitOutcome> out;
  for (const auto& w : waits) {
    out.push_back(Committed(w) ? CommitOutcome::kCommitted
                  : Deposed(w) ? CommitOutcome::kDeposed
                               : CommitOutcome::kTimedOut);
  }
  co_return out;
}

}  // namespace strata::kafka
