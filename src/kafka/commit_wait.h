#pragma once
// Waiting for appends to be committed: until the partition's high watermark
// passes them (every ISR member has them), as an acks=all produce and the
// group coordinator's writes need, on a timer and the append notifier, never
// a blocked thread.
#include <asio.hpp>
#include <chrono>
#include <memory>
#include <vector>

#include "base/offset.h"
#include "broker/partition.h"
#include "cluster/types.h"
#include "kafka/broker_context.h"

namespace strata::kafka {

// An append by this broker, leading at `leader_epoch`, ending at
// `last_offset`.
struct CommitWait {
  std::shared_ptr<broker::Partition> partition;
  Offset last_offset;
  cluster::NodeId leader{-1};
  cluster::LeaderEpoch leader_epoch{-1};
};

enum class CommitOutcome {
  kCommitted,  // below the high watermark
  kDeposed,    // leadership moved first: it will never commit here
  kTimedOut,   // the ISR did not confirm it in time
};

// Waits until every append is committed or deposed, or `timeout`; one
// outcome per append, in order. Woken through ctx.notifier, which must be
// told of high watermark and leadership changes of the partitions.
asio::awaitable<std::vector<CommitOutcome>> AwaitCommitted(BrokerContext& ctx,
                                                           const std::vector<CommitWait>& waits,
                                                           std::chrono::milliseconds timeout);

}  // namespace strata::kafka
