// Fetch (1): reads whole batches from each requested partition (the first
// one containing the fetch offset; at least one batch even past max_bytes,
// KIP-74) and long-polls up to max_wait_ms for min_bytes, woken early by
// produce. Local records are not copied: the response carries them as file
// regions the server sends with sendfile(2). Fetch sessions (KIP-227,
// fetch_session.h): an incremental fetch reads every partition of its
// session and is answered about those with news.
//
// KIP-392: a consumer's fetch (v11+) may be served by a follower, up to the
// follower's high watermark; the leader, with replica.selector.class set,
// answers a consumer in another rack with a preferred read replica in it.
//
// Client quotas (KIP-124, KIP-219), as Kafka's handleFetchRequest: a
// consumer's fetch is capped at what its fetch quota lets through at once,
// and over its fetch or request quota it is answered empty.
#include "protocol/messages/fetch.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

#include "base/metrics.h"
#include "broker/replica_selector.h"
#include "cluster/metadata.h"
#include "kafka/authorization.h"
#include "kafka/error_mapping.h"
#include "kafka/fetch_session.h"
#include "kafka/handlers/fetch_remote.h"
#include "kafka/handlers/handlers.h"
#include "kafka/quota_charge.h"
#include "protocol/error_code.h"
#include "protocol/record_batch.h"

namespace strata::kafka {

namespace {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;

// Whether the fetch is a follower's (Fetch's replica id), and which; for a
// consumer, whether a follower may serve it and the client's rack.
struct Fetcher {
  bool replica = false;
  cluster::NodeId id{-1};
  // A replica's registration when its request arrived (0: none), so the
  // leader can tell its incarnations apart (FollowerTracker).
  int64_t broker_epoch = 0;
  // Kafka's fetchOnlyLeader false: a consumer whose request (v11+) carries
  // client metadata.
  bool follower_reads = false;
  std::string rack;  // rack_id (v11+)
  // A consumer with isolation_level=read_committed: it reads below the last
  // stable offset and is told the aborted transactions in what it reads.
  bool read_committed = false;
  // Topics the fetcher may not read (a consumer without READ on them, a
  // follower without CLUSTER_ACTION): TOPIC_AUTHORIZATION_FAILED.
  std::set<std::string> denied_topics;
  // Every topic denied: nothing to wait for, the answer goes at once (as
  // Kafka's, which sends only the errors when no partition is left to read).
  bool all_denied = false;
};

// How much of a partition one fetch reads, and up to where.
struct RecordsRead {
  int32_t max_bytes = 0;
  Offset readable_end;       // high watermark (consumer) or log end (follower)
  bool first_data = false;   // nothing read yet: at least one batch (KIP-74)
  bool as_follower = false;  // for a consumer, from a partition this broker follows
};

// The topic-level settings a partition read needs.
struct TopicRead {
  const std::string& topic;
  int min_isr = 1;
  bool tiered = false;
};

// KIP-320: a follower whose last fetched epoch ends, on this leader,
// before its fetch offset (or is unknown here) has a tail this leader
// does not: it is told where the leader's history of that epoch ends.
std::optional<FetchResponse::EpochEndOffset> Divergence(const storage::Log& log,
                                                        const FetchRequest::Partition& in) {
  if (in.last_fetched_epoch < 0) return std::nullopt;
  const LeaderEpoch last_fetched(in.last_fetched_epoch);
  auto [epoch, end] = log.EndOffsetForEpoch(last_fetched);
  if (epoch == last_fetched && end >= Offset(in.fetch_offset)) return std::nullopt;
  return FetchResponse::EpochEndOffset{epoch.value(), end.value()};
}

// The offset a fetch of this partition reads up to: the log end for a
// follower, the high watermark for a consumer (moved first if the ISR
// allows: an ISR of one commits what is appended), the last stable offset
// for a read_committed one.
Offset ReadableEnd(broker::Partition& partition, const Fetcher& fetcher, int min_isr) {
  if (fetcher.replica) return partition.log()->log_end_offset();
  partition.MaybeAdvanceHighWatermark(min_isr);
  return fetcher.read_committed ? partition.last_stable_offset() : partition.high_watermark();
}

// The follower a consumer in another rack should read `tp` from, as the
// leader's replica selector picks it (KIP-392), or nullopt.
std::optional<cluster::NodeId> PreferredReadReplica(BrokerContext& ctx, const TopicRead& topic,
                                                    broker::Partition& partition,
                                                    const Fetcher& fetcher, Offset fetch_offset) {
  if (ctx.replica_selector == broker::ReplicaSelectorKind::kLeaderOnly || !fetcher.follower_reads ||
      fetcher.rack.empty() || ctx.metadata == nullptr) {
    return std::nullopt;
  }
  broker::ReadReplicaQuery query;
  query.client_rack = fetcher.rack;
  query.fetch_offset = fetch_offset;
  query.leader_rack = ctx.config.Get("broker.rack");
  query.followers = partition.ReadReplicaCandidates(ctx.clock->MonotonicMs());
  // A follower of a tiered partition serves what remote storage holds too
  // (RemoteLogManager::AddReader); ISR members join up with it.
  const Offset partition_start =
      topic.tiered ? ctx.topics.LogStartOffset(partition.tp(), *partition.log()) : Offset::Max();
  for (broker::ReadReplicaCandidate& c : query.followers) {
    c.log_start_offset = std::min(c.log_start_offset, partition_start);
    if (auto b = ctx.metadata->view().Broker(c.id)) {
      c.alive = cluster::EligibleForLeadership(b->registration.state);
      c.rack = b->registration.rack;
    }
  }
  return broker::SelectReadReplica(ctx.replica_selector, query);
}

// KIP-392 on the leader: true when the selector sends the consumer to a
// follower; `out` then says which, with no records and the offsets as the
// leader has them (as Kafka).
bool SentToPreferredReplica(BrokerContext& ctx, const TopicRead& topic,
                            broker::Partition& partition, const Fetcher& fetcher,
                            const FetchRequest::Partition& in, FetchResponse::Partition& out) {
  auto preferred = PreferredReadReplica(ctx, topic, partition, fetcher, Offset(in.fetch_offset));
  if (!preferred) return false;
  out.preferred_read_replica = preferred->value();
  out.high_watermark = ctx.topics.HighWatermark(partition).value();
  out.last_stable_offset = partition.last_stable_offset().value();
  out.log_start_offset = ctx.topics.LogStartOffset(partition.tp(), *partition.log()).value();
  return true;
}

// The replica to read `tp` from: the leader's, or for a consumer that a
// follower may serve any hosted here (`as_follower` then tells which).
// Null, with Kafka's error (and the leader, KIP-951) in `out`, if none.
std::shared_ptr<broker::Partition> FindReplica(BrokerContext& ctx, const TopicPartition& tp,
                                               const Fetcher& fetcher,
                                               const FetchRequest::Partition& in,
                                               FetchResponse::Partition& out, bool& as_follower) {
  broker::LeaderLookup found = fetcher.follower_reads
                                   ? ctx.topics.ReplicaPartition(tp, in.current_leader_epoch)
                                   : ctx.topics.LeaderPartition(tp, in.current_leader_epoch);
  if (found.error != ErrorCode::kNone) {
    out.error_code = Code(found.error);
    if (found.leader != cluster::kNoNode) {
      out.current_leader =
          FetchResponse::LeaderIdAndEpoch{found.leader.value(), found.leader_epoch.value()};
    }
    return nullptr;
  }
  as_follower = found.leader != ctx.topics.self();
  return std::move(found.partition);
}

// Reads the records of one partition from `in.fetch_offset` into `out`,
// or, when only remote storage holds them, reserves `max_bytes` for a read
// there (`remote`). Returns the bytes spent, -1 with `out.error_code` set.
// Local retention may delete the segment between the check and the read
// (the records are remote by then): a read that finds its offset gone
// looks again, as Kafka's handleOffsetOutOfRangeError does.
int32_t ReadRecords(BrokerContext& ctx, const TopicPartition& tp, storage::Log& log,
                    const Fetcher& fetcher, const FetchRequest::Partition& in,
                    const RecordsRead& bounds, FetchResponse::Partition& out, RemoteRead* remote) {
  const Offset fetch_offset(in.fetch_offset);
  for (int attempt = 0;; ++attempt) {
    if (fetch_offset < log.log_start_offset() && ctx.topics.remote() != nullptr) {
      if (fetcher.replica) {
        // KIP-405: a follower does not copy what remote storage holds; it
        // starts its log over where this leader says (replica_start.cc).
        out.error_code = Code(ErrorCode::kOffsetMovedToTieredStorage);
        return -1;
      }
      remote->tp = tp;
      remote->offset = fetch_offset;
      remote->max_bytes = bounds.max_bytes;
      remote->readable_end = bounds.readable_end;
      remote->as_follower = bounds.as_follower;
      remote->read_committed = fetcher.read_committed;
      return bounds.max_bytes;  // reserved: the remote read may fill it
    }
    auto read = log.ReadRegion(fetch_offset, bounds.max_bytes, bounds.readable_end,
                               /*min_one_batch=*/bounds.first_data);
    if (read.ok()) {
      const auto n = static_cast<int32_t>(read->region.length);
      out.records.Send(std::move(read->region));
      return n;
    }
    const bool retention_raced = read.error().code == Errc::kOutOfRange &&
                                 fetch_offset < log.log_start_offset() && attempt == 0;
    if (!retention_raced) {
      out.error_code = Code(GenericErrorCode(read.error().code));
      return -1;
    }
  }
}

// Reads one partition into `out`, spending `budget` bytes; returns the
// readable end seen (kNoOffset when the partition is unreadable or the client
// is sent to another replica).
Offset ReadPartition(BrokerContext& ctx, const TopicRead& topic, const Fetcher& fetcher,
                     const FetchRequest::Partition& in, bool first_data, int32_t& budget,
                     FetchResponse::Partition& out, RemoteRead* remote, bool& as_follower) {
  out.partition_index = in.partition;
  out.records.null = false;
  const TopicPartition tp{topic.topic, in.partition};
  const Offset fetch_offset(in.fetch_offset);
  std::shared_ptr<broker::Partition> replica = FindReplica(ctx, tp, fetcher, in, out, as_follower);
  if (!replica) return kNoOffset;
  broker::Partition& partition = *replica;
  const std::shared_ptr<storage::Log>& log = partition.log();
  const int min_isr = topic.min_isr;
  if (!as_follower && SentToPreferredReplica(ctx, topic, partition, fetcher, in, out)) {
    return kNoOffset;
  }
  if (fetcher.replica) {
    if (auto diverging = Divergence(*log, in)) {
      out.diverging_epoch = diverging;
      out.high_watermark = partition.high_watermark().value();
      out.log_start_offset = ctx.topics.LogStartOffset(tp, *log).value();
      return kNoOffset;
    }
    auto now = ctx.clock->MonotonicMs();
    // A mark moved by it wakes consumers and acks=all producers.
    partition.OnFollowerFetch(fetcher.id, fetch_offset, min_isr, now, Offset(in.log_start_offset),
                              fetcher.broker_epoch);
  }
  Offset log_start = ctx.topics.LogStartOffset(tp, *log);
  Offset readable = ReadableEnd(partition, fetcher, min_isr);
  out.high_watermark = partition.high_watermark().value();
  out.last_stable_offset = partition.last_stable_offset().value();
  out.log_start_offset = log_start.value();
  if (fetcher.read_committed) out.aborted_transactions.emplace();
  if (fetch_offset < log_start || fetch_offset > log->log_end_offset()) {
    out.error_code = Code(ErrorCode::kOffsetOutOfRange);
    return kNoOffset;
  }
  if (fetch_offset >= readable || (budget <= 0 && !first_data)) return readable;
  // Kafka's leader-side replication quota: a throttled follower outside the
  // ISR gets nothing this round once the rate is used up.
  const bool throttled =
      fetcher.replica && ctx.topics.leader_throttle().rate() != replication::kUnthrottled &&
      ctx.topics.ReplicaThrottled(partition, "leader.replication.throttled.replicas",
                                  cluster::NodeId(ctx.config.node_id()), fetcher.id);
  if (throttled && ctx.topics.leader_throttle().Exceeded()) return readable;
  int32_t max_bytes = std::max(std::min(in.partition_max_bytes, budget), 0);
  const RecordsRead bounds{max_bytes, readable, first_data, as_follower};
  // Collected before the read, while the segments read are still listed
  // (retention may delete one right after; the read then fails and is
  // retried). Up to the readable end: it may name aborts past what this
  // response holds, which a consumer ignores; it never leaves one out.
  std::vector<storage::AbortedTxn> aborted;
  if (fetcher.read_committed) aborted = log->AbortedTransactions(fetch_offset, readable);
  const int32_t sent = ReadRecords(ctx, tp, *log, fetcher, in, bounds, out, remote);
  if (sent < 0) return kNoOffset;
  if (fetcher.read_committed && sent > 0) {
    for (const storage::AbortedTxn& txn : aborted) {
      out.aborted_transactions->push_back({txn.producer_id, txn.first_offset.value()});
    }
  }
  budget -= sent;
  if (throttled) ctx.topics.leader_throttle().Record(sent);
  return readable;
}

// Counts what a response about to be sent carries, per replica (the
// balancer's load samples): a long poll reads again before it answers, so
// only the answer counts.
void CountSent(BrokerContext& ctx, const FetchResponse& resp, const Fetcher& fetcher) {
  for (const auto& t : resp.responses) {
    for (const auto& p : t.partitions) {
      const auto bytes = static_cast<int64_t>(p.records.size());
      if (bytes == 0) continue;
      auto partition = ctx.topics.GetPartition({t.topic, p.partition_index});
      if (!partition) continue;
      if (fetcher.replica) {
        partition->traffic().ReplicatedOut(bytes);
      } else {
        partition->traffic().Consumed(bytes);
      }
    }
  }
}

// Builds the response, and tallies what it holds.
FetchResponse ReadAll(BrokerContext& ctx, const FetchRequest& req, const Fetcher& fetcher,
                      ReadTally& tally, std::vector<Offset>& end_offsets,
                      std::vector<RemoteRead>& remote) {
  FetchResponse resp;
  end_offsets.clear();
  remote.clear();
  int32_t budget = req.max_bytes > 0 ? req.max_bytes : INT32_MAX;
  tally = ReadTally{};
  for (const auto& topic : req.topics) {
    auto& out_topic = resp.responses.emplace_back();
    out_topic.topic = topic.topic;
    if (fetcher.denied_topics.contains(topic.topic)) {
      for (const auto& partition : topic.partitions) {
        auto& out = out_topic.partitions.emplace_back();
        out.partition_index = partition.partition;
        out.error_code = Code(ErrorCode::kTopicAuthorizationFailed);
        end_offsets.push_back(Offset(INT64_MAX));  // never "new data"
      }
      continue;
    }
    auto info = ctx.topics.GetTopicInfo(topic.topic);
    const TopicRead read{topic.topic, info ? info->min_insync_replicas : 1,
                         info && info->log_config.remote_storage_enable};
    for (const auto& partition : topic.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      int32_t before = budget;
      RemoteRead r;
      bool as_follower = false;
      end_offsets.push_back(ReadPartition(ctx, read, fetcher, partition, tally.bytes == 0, budget,
                                          out, &r, as_follower));
      const bool remote_read = r.tp.has_value();
      if (remote_read) {
        r.topic_index = resp.responses.size() - 1;
        r.partition_index = out_topic.partitions.size() - 1;
        remote.push_back(std::move(r));
      }
      tally.bytes += before - budget;
      if (as_follower) {
        tally.as_follower = true;
        if (!remote_read) tally.follower_bytes += before - budget;  // remote: once read
      }
      tally.answer_now |=
          out.error_code != 0 || out.diverging_epoch.has_value() || out.preferred_read_replica >= 0;
    }
  }
  return resp;
}

// True when any requested partition has more to read than `end_offsets`
// saw (its log end for a follower, its high watermark for a consumer).
bool HasNewData(BrokerContext& ctx, const FetchRequest& req, const Fetcher& fetcher,
                const std::vector<Offset>& end_offsets) {
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

// Fetch metrics (Kafka's names where it has them).
struct FetchProbe {
  metrics::Counter& replication_bytes_out = metrics::Global().GetCounter(
      "strata_replication_bytes_out_total", "Record bytes this broker sent to its followers");
  metrics::Counter& follower_fetches = metrics::Global().GetCounter(
      "strata_follower_fetch_requests_total",
      "Consumer fetches served by this broker as a follower of a partition (KIP-392)");
  metrics::Counter& follower_bytes = metrics::Global().GetCounter(
      "strata_follower_fetch_bytes_total",
      "Record bytes sent to consumers from partitions this broker follows (KIP-392)");
  metrics::Counter& preferred_read_replica = metrics::Global().GetCounter(
      "strata_preferred_read_replica_total",
      "Partitions of consumer fetches this leader sent to a preferred read replica (KIP-392)");
};

FetchProbe& Probe() {
  static FetchProbe probe;
  return probe;
}

// Kafka's fetchMaxBytes and fetchMinBytes for a consumer: no more than its
// fetch quota lets through at once, as a larger response would be throttled
// however long the consumer had been idle (KIP-74's first batch still goes
// out whole), and no waiting for more than that.
void CapToFetchQuota(BrokerContext& ctx, const net::Request& request, FetchRequest& req) {
  const int32_t asked = req.max_bytes > 0 ? req.max_bytes : INT32_MAX;
  req.max_bytes = std::min(asked, FetchBytesBound(ctx, request));
  req.min_bytes = std::min(req.min_bytes, req.max_bytes);
}

// Charges a consumer's fetch to its request and fetch quotas, as Kafka's
// handleFetchRequest: over either, the response goes out empty with the
// larger throttle (getThrottledResponse of a sessionless fetch: no
// partitions, so no records or file regions), and the bytes it does not
// carry are taken back from the fetch quota. Followers are not charged
// (replication has its own quotas).
bool ThrottleConsumer(BrokerContext& ctx, net::Request& request, FetchResponse& resp,
                      ReadTally& tally) {
  const int32_t request_throttle = net::ChargeRequestTime(request);
  const auto bytes = static_cast<size_t>(tally.bytes);
  const int32_t bandwidth_throttle = ChargeFetch(ctx, request, bytes);
  const int32_t throttle = std::max(request_throttle, bandwidth_throttle);
  if (throttle == 0) return false;
  UnchargeFetch(ctx, request, bytes);
  resp = FetchResponse{};
  resp.throttle_time_ms = throttle;
  tally = ReadTally{};
  return true;
}

// The fetch's session, if it has one (Fetch v7+ on a broker that keeps them).
struct SessionOfFetch {
  FetchSessionCache* cache = nullptr;
  FetchSessionContext context;
};

// The response to send (empty when the consumer is throttled), counted.
std::optional<Bytes> Respond(BrokerContext& ctx, net::Request& request, const FetchRequest& req,
                             FetchResponse& resp, const Fetcher& fetcher, ReadTally tally,
                             const SessionOfFetch& session) {
  const bool throttled = !fetcher.replica && ThrottleConsumer(ctx, request, resp, tally);
  if (session.cache != nullptr) {
    session.cache->Finish(session.context, req, resp, throttled, ctx.clock->MonotonicMs());
  }
  CountSent(ctx, resp, fetcher);
  FetchProbe& probe = Probe();
  if (fetcher.replica && tally.bytes > 0) {
    probe.replication_bytes_out.Add(static_cast<uint64_t>(tally.bytes));
  }
  if (tally.as_follower) {
    probe.follower_fetches.Add(1);
    if (tally.follower_bytes > 0) {
      probe.follower_bytes.Add(static_cast<uint64_t>(tally.follower_bytes));
    }
  }
  if (fetcher.follower_reads) {
    for (const auto& t : resp.responses) {
      for (const auto& p : t.partitions) {
        if (p.preferred_read_replica >= 0) probe.preferred_read_replica.Add(1);
      }
    }
  }
  return EncodeResponse(request, resp, &request.response_splices);
}

}  // namespace

asio::awaitable<HandlerResult> HandleFetch(BrokerContext& ctx, net::Request& request) {
  auto decoded = DecodeRequest<FetchRequest>(request);
  if (!decoded.ok()) co_return decoded.take_error();
  FetchRequest& req = decoded.value();
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(req.max_wait_ms, 0));
  SessionOfFetch session;
  if (ctx.fetch_sessions != nullptr && request.header.api_version >= 7) {
    session.cache = ctx.fetch_sessions;
    // An incremental fetch's partitions become all of its session's.
    session.context = session.cache->Begin(req, req.replica_id >= 0, ctx.clock->MonotonicMs());
    if (session.context.error != ErrorCode::kNone) {
      FetchResponse resp;
      session.cache->Finish(session.context, req, resp, false, ctx.clock->MonotonicMs());
      co_return EncodeResponse(request, resp, &request.response_splices);
    }
  }
  std::vector<TopicPartition> partitions;
  for (const auto& t : req.topics) {
    for (const auto& p : t.partitions) partitions.push_back({t.topic, p.partition});
  }
  std::vector<Offset> end_offsets;
  std::vector<RemoteRead> remote;
  Fetcher fetcher;
  fetcher.replica = req.replica_id >= 0;
  fetcher.read_committed = !fetcher.replica && req.isolation_level == protocol::kReadCommitted;
  fetcher.id = cluster::NodeId(req.replica_id);
  if (fetcher.replica && ctx.metadata) {
    if (auto b = ctx.metadata->view().Broker(fetcher.id)) fetcher.broker_epoch = b->epoch.value();
  }
  fetcher.follower_reads = !fetcher.replica && request.header.api_version >= 11;
  fetcher.rack = req.rack_id;
  if (!fetcher.replica) CapToFetchQuota(ctx, request, req);
  if (fetcher.replica) request.quota_exempt = true;
  // Kafka answers a follower without CLUSTER_ACTION, like a consumer
  // without READ, with TOPIC_AUTHORIZATION_FAILED on each partition.
  const bool follower_allowed =
      fetcher.replica && AuthorizedOnCluster(ctx, request, security::AclOperation::kClusterAction);
  for (const auto& t : req.topics) {
    if (fetcher.replica ? !follower_allowed
                        : !Authorized(ctx, request, security::AclOperation::kRead,
                                      security::ResourceType::kTopic, t.topic)) {
      fetcher.denied_topics.insert(t.topic);
    }
  }
  fetcher.all_denied =
      !req.topics.empty() && std::all_of(req.topics.begin(), req.topics.end(), [&](const auto& t) {
        return fetcher.denied_topics.contains(t.topic);
      });
  for (;;) {
    ReadTally tally;
    FetchResponse resp = ReadAll(ctx, req, fetcher, tally, end_offsets, remote);
    // Remote reads run on the reader pool: waiting, not this request's work.
    if (!remote.empty()) co_await Waited(request, ReadRemote(ctx, remote, resp, tally));
    auto now = std::chrono::steady_clock::now();
    if (tally.bytes >= req.min_bytes || tally.answer_now || fetcher.all_denied || now >= deadline ||
        partitions.empty()) {
      co_return Respond(ctx, request, req, resp, fetcher, tally, session);
    }
    auto waiter = ctx.notifier.Register(co_await asio::this_coro::executor, partitions);
    if (!HasNewData(ctx, req, fetcher, end_offsets)) {
      auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
      const auto wait_start = std::chrono::steady_clock::now();
      co_await ctx.notifier.Wait(waiter, remaining);
      request.waited += std::chrono::steady_clock::now() - wait_start;
    }
    ctx.notifier.Unregister(waiter);
    if (std::chrono::steady_clock::now() >= deadline &&
        !HasNewData(ctx, req, fetcher, end_offsets)) {
      co_return Respond(ctx, request, req, resp, fetcher, tally, session);
    }
  }
}

}  // namespace strata::kafka
