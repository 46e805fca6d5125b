// Fetch (1): reads whole batches from each requested partition (the first
// one containing the fetch offset; at least one batch even past max_bytes,
// KIP-74) and long-polls up to max_wait_ms for min_bytes, woken early by
// produce. Local records are not copied: the response carries them as file
// regions the server sends with sendfile(2). Fetch sessions (KIP-227) are declined with session id
// 0, which every client handles by sending full fetches.
#include "protocol/messages/fetch.h"

#include <asio/experimental/as_tuple.hpp>
#include <chrono>

#include "base/metrics.h"
#include "broker/error_mapping.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_code.h"

namespace strata::broker {

namespace {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;

// A partition whose fetch offset is only in remote storage; answered after
// the local reads (indexes into FetchResponse::responses / partitions).
struct RemoteRead {
  size_t topic_index = 0;
  size_t partition_index = 0;
  std::string key;
  int64_t offset = 0;
  int32_t max_bytes = 0;
  Result<Bytes> result = Bytes{};
};

// Whether the fetch is a follower's (Fetch's replica id), and which.
struct Fetcher {
  bool replica = false;
  cluster::NodeId id{-1};
};

// KIP-320: a follower whose last fetched epoch ends, on this leader,
// before its fetch offset (or is unknown here) has a tail this leader
// does not: it is told where the leader's history of that epoch ends.
std::optional<FetchResponse::EpochEndOffset> Divergence(const storage::Log& log,
                                                        const FetchRequest::Partition& in) {
  if (in.last_fetched_epoch < 0) return std::nullopt;
  auto [epoch, end] = log.EndOffsetForEpoch(in.last_fetched_epoch);
  if (epoch == in.last_fetched_epoch && end >= in.fetch_offset) return std::nullopt;
  return FetchResponse::EpochEndOffset{epoch, end};
}

// The offset a fetch of this partition reads up to: the log end for a
// follower, the high watermark for a consumer (moved first if the ISR
// allows: an ISR of one commits what is appended).
int64_t ReadableEnd(Partition& partition, const Fetcher& fetcher, int min_isr) {
  if (fetcher.replica) return partition.log()->log_end_offset();
  partition.MaybeAdvanceHighWatermark(min_isr);
  return partition.high_watermark();
}

// Reads one partition into `out`, spending `budget` bytes; returns the
// readable end seen (-1 when the partition is unreadable).
int64_t ReadPartition(BrokerContext& ctx, const std::string& topic, int min_isr,
                      const Fetcher& fetcher, const FetchRequest::Partition& in, bool first_data,
                      int32_t& budget, FetchResponse::Partition& out, RemoteRead* remote) {
  out.partition_index = in.partition;
  out.records.null = false;
  const TopicPartition tp{topic, in.partition};
  LeaderLookup leader = ctx.topics.LeaderPartition(tp, in.current_leader_epoch);
  if (leader.error != ErrorCode::kNone) {
    out.error_code = Code(leader.error);
    if (leader.leader != cluster::kNoNode) {
      out.current_leader =
          FetchResponse::LeaderIdAndEpoch{leader.leader.value(), leader.leader_epoch.value()};
    }
    return -1;
  }
  Partition& partition = *leader.partition;
  const std::shared_ptr<storage::Log>& log = partition.log();
  if (fetcher.replica) {
    if (auto diverging = Divergence(*log, in)) {
      out.diverging_epoch = diverging;
      out.high_watermark = partition.high_watermark();
      out.log_start_offset = ctx.topics.LogStartOffset(tp, *log);
      return -1;
    }
    auto now = ctx.clock->MonotonicMs();
    if (partition.OnFollowerFetch(fetcher.id, in.fetch_offset, min_isr, now, in.log_start_offset)) {
      ctx.notifier.Notify(tp);  // consumers and acks=all producers wait on the mark
    }
  }
  int64_t log_start = ctx.topics.LogStartOffset(tp, *log);
  int64_t readable = ReadableEnd(partition, fetcher, min_isr);
  out.high_watermark = partition.high_watermark();
  out.last_stable_offset = out.high_watermark;
  out.log_start_offset = log_start;
  if (in.fetch_offset < log_start || in.fetch_offset > log->log_end_offset()) {
    out.error_code = Code(ErrorCode::kOffsetOutOfRange);
    return -1;
  }
  if (fetcher.replica && in.fetch_offset < log->log_start_offset() &&
      log_start < log->log_start_offset()) {
    // KIP-405: a follower does not copy what remote storage holds; it
    // starts its log over where this leader says (replica_start.cc).
    out.error_code = Code(ErrorCode::kOffsetMovedToTieredStorage);
    return -1;
  }
  if (in.fetch_offset >= readable || (budget <= 0 && !first_data)) return readable;
  // Kafka's leader-side replication quota: a throttled follower outside the
  // ISR gets nothing this round once the rate is used up.
  const bool throttled = fetcher.replica && ctx.topics.ReplicaThrottled(
                                                partition, "leader.replication.throttled.replicas",
                                                cluster::NodeId(ctx.config.node_id()), fetcher.id);
  if (throttled && ctx.topics.leader_throttle().Exceeded()) return readable;
  int32_t max_bytes = std::max(std::min(in.partition_max_bytes, budget), 0);
  if (in.fetch_offset < log->log_start_offset() && ctx.topics.remote() != nullptr) {
    remote->key = tp.ToString();
    remote->offset = in.fetch_offset;
    remote->max_bytes = max_bytes;
    budget -= max_bytes;  // reserved: the remote read may fill it
    return readable;
  }
  auto read = log->ReadRegion(in.fetch_offset, max_bytes, readable, /*min_one_batch=*/first_data);
  if (!read.ok()) {
    out.error_code = Code(GenericErrorCode(read.error().code));
    return -1;
  }
  budget -= static_cast<int32_t>(read->region.length);
  if (throttled) ctx.topics.leader_throttle().Record(static_cast<int64_t>(read->region.length));
  out.records.Send(std::move(read->region));
  return readable;
}

// Builds the response; returns the record bytes it holds and whether any
// partition has an error.
FetchResponse ReadAll(BrokerContext& ctx, const FetchRequest& req, const Fetcher& fetcher,
                      int64_t& bytes, bool& errors, std::vector<int64_t>& end_offsets,
                      std::vector<RemoteRead>& remote) {
  FetchResponse resp;
  end_offsets.clear();
  remote.clear();
  int32_t budget = req.max_bytes > 0 ? req.max_bytes : INT32_MAX;
  bytes = 0;
  errors = false;
  for (const auto& topic : req.topics) {
    auto& out_topic = resp.responses.emplace_back();
    out_topic.topic = topic.topic;
    auto info = ctx.topics.GetTopicInfo(topic.topic);
    const int min_isr = info ? info->min_insync_replicas : 1;
    for (const auto& partition : topic.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      int32_t before = budget;
      RemoteRead r;
      end_offsets.push_back(ReadPartition(ctx, topic.topic, min_isr, fetcher, partition, bytes == 0,
                                          budget, out, &r));
      if (!r.key.empty()) {
        r.topic_index = resp.responses.size() - 1;
        r.partition_index = out_topic.partitions.size() - 1;
        remote.push_back(std::move(r));
      }
      bytes += before - budget;
      errors |= out.error_code != 0 || out.diverging_epoch.has_value();
    }
  }
  return resp;
}

// True when any requested partition has more to read than `end_offsets`
// saw (its log end for a follower, its high watermark for a consumer).
bool HasNewData(BrokerContext& ctx, const FetchRequest& req, const Fetcher& fetcher,
                const std::vector<int64_t>& end_offsets) {
  size_t i = 0;
  for (const auto& topic : req.topics) {
    auto info = ctx.topics.GetTopicInfo(topic.topic);
    const int min_isr = info ? info->min_insync_replicas : 1;
    for (const auto& p : topic.partitions) {
      auto partition = ctx.topics.GetPartition({topic.topic, p.partition});
      if (partition && ReadableEnd(*partition, fetcher, min_isr) > end_offsets[i]) return true;
      ++i;
    }
  }
  return false;
}

// Runs the remote reads on the reader pool, all partitions at once, and
// resumes when every one has answered. Completions are posted back to this
// coroutine's strand, so `left` needs no lock; the timer is only a wake-up.
asio::awaitable<void> RunRemoteReads(tiered::RemoteLogManager* rlm,
                                     std::vector<RemoteRead>& reads) {
  struct Pending {
    explicit Pending(asio::any_io_executor e, size_t n) : timer(e), left(n) {}
    asio::steady_timer timer;
    size_t left;
    std::vector<Result<Bytes>> results;
  };
  auto executor = co_await asio::this_coro::executor;
  auto pending = std::make_shared<Pending>(executor, reads.size());
  pending->results.resize(reads.size(), Bytes{});
  pending->timer.expires_at(asio::steady_timer::time_point::max());
  for (size_t i = 0; i < reads.size(); ++i) {
    asio::post(rlm->reader_pool(), [rlm, pending, executor, i, key = reads[i].key,
                                    offset = reads[i].offset, max = reads[i].max_bytes] {
      pending->results[i] = rlm->Read(key, offset, max);
      asio::post(executor, [pending] {
        if (--pending->left == 0) pending->timer.cancel();
      });
    });
  }
  while (pending->left > 0) {
    co_await pending->timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  }
  for (size_t i = 0; i < reads.size(); ++i) reads[i].result = std::move(pending->results[i]);
}

// Puts the remote reads' batches (or a retriable KAFKA_STORAGE_ERROR) into
// `resp`; returns the bytes added.
asio::awaitable<int64_t> ReadRemote(BrokerContext& ctx, std::vector<RemoteRead>& reads,
                                    FetchResponse& resp, bool& errors) {
  co_await RunRemoteReads(ctx.topics.remote(), reads);
  int64_t bytes = 0;
  for (RemoteRead& r : reads) {
    auto& out = resp.responses[r.topic_index].partitions[r.partition_index];
    if (!r.result.ok()) {
      // Retention removed it meanwhile: out of range; a store outage (or an
      // open breaker): KAFKA_STORAGE_ERROR, which clients retry.
      out.error_code =
          Code(r.result.error().code == Errc::kNotFound ? ErrorCode::kOffsetOutOfRange
                                                        : ErrorCode::kKafkaStorageError);
      errors = true;
      continue;
    }
    bytes += static_cast<int64_t>(r.result->size());
    out.records.Own(std::move(r.result).value());
  }
  co_return bytes;
}

metrics::Counter& ReplicationBytesOut() {
  static metrics::Counter& c = metrics::Global().GetCounter(
      "strata_replication_bytes_out_total", "Record bytes this broker sent to its followers");
  return c;
}

// The response to send, with the bytes a follower gets counted.
std::optional<Bytes> Respond(net::Request& request, FetchResponse& resp, const Fetcher& fetcher,
                             int64_t bytes) {
  if (fetcher.replica && bytes > 0) ReplicationBytesOut().Add(static_cast<uint64_t>(bytes));
  return EncodeResponse(request, resp, &request.response_splices);
}

}  // namespace

asio::awaitable<HandlerResult> HandleFetch(BrokerContext& ctx, net::Request& request) {
  auto decoded = DecodeRequest<FetchRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  FetchRequest& req = decoded.value();
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(req.max_wait_ms, 0));
  std::vector<TopicPartition> partitions;
  for (const auto& t : req.topics) {
    for (const auto& p : t.partitions) partitions.push_back({t.topic, p.partition});
  }
  std::vector<int64_t> end_offsets;
  std::vector<RemoteRead> remote;
  Fetcher fetcher{req.replica_id >= 0, cluster::NodeId(req.replica_id)};
  for (;;) {
    int64_t bytes = 0;
    bool errors = false;
    FetchResponse resp = ReadAll(ctx, req, fetcher, bytes, errors, end_offsets, remote);
    if (!remote.empty()) bytes += co_await ReadRemote(ctx, remote, resp, errors);
    auto now = std::chrono::steady_clock::now();
    if (bytes >= req.min_bytes || errors || now >= deadline || partitions.empty()) {
      co_return Respond(request, resp, fetcher, bytes);
    }
    auto waiter = ctx.notifier.Register(co_await asio::this_coro::executor, partitions);
    if (!HasNewData(ctx, req, fetcher, end_offsets)) {
      auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
      co_await ctx.notifier.Wait(waiter, remaining);
    }
    ctx.notifier.Unregister(waiter);
    if (std::chrono::steady_clock::now() >= deadline &&
        !HasNewData(ctx, req, fetcher, end_offsets)) {
      co_return Respond(request, resp, fetcher, bytes);
    }
  }
}

}  // namespace strata::broker
