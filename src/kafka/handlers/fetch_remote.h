#pragma once
// The part of a Fetch that remote storage answers (fetch.cc): partitions
// whose fetch offset only remote storage holds are read after the local ones,
// on the remote log manager's reader pool, all at once, within
// strata.remote.fetch.max.bytes; their batches go into the response as
// regions (cached chunk files or fetched buffers), not copies.
#include <asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/offset.h"
#include "base/result.h"
#include "base/topic_partition.h"
#include "kafka/broker_context.h"
#include "protocol/messages/fetch.h"
#include "storage/log.h"
#include "tiered/remote_range.h"

namespace strata::kafka {

// A partition whose fetch offset is only in remote storage; answered after
// the local reads (indexes into FetchResponse::responses / partitions).
struct RemoteRead {
  size_t topic_index = 0;
  size_t partition_index = 0;
  std::optional<TopicPartition> tp;  // set when the read goes to remote storage
  Offset offset;
  int32_t max_bytes = 0;
  Offset readable_end;       // the read stops below it (a follower's high watermark)
  bool as_follower = false;  // for a consumer, from a partition this broker follows
  bool read_committed = false;
  Result<tiered::RemoteRange> result = tiered::RemoteRange{};
  std::vector<storage::AbortedTxn> aborted;  // read_committed: the remote segments' aborts
};

// What a read of the partitions came to.
struct ReadTally {
  int64_t bytes = 0;           // record bytes in the response
  int64_t follower_bytes = 0;  // ... from partitions this broker follows
  bool as_follower = false;    // a partition was read as a follower
  bool answer_now = false;     // an error, a divergence or a preferred read replica
};

// Puts the remote reads' batches (or a retriable KAFKA_STORAGE_ERROR) into
// `resp`, and tallies them. The budget reserved for them is counted in
// tally.bytes already: what they did not fill is given back.
asio::awaitable<void> ReadRemote(BrokerContext& ctx, std::vector<RemoteRead>& reads,
                                 protocol::FetchResponse& resp, ReadTally& tally);

}  // namespace strata::kafka
