#include "kafka/txn_marker_channel.h"

#include <fmt/format.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <map>
#include <memory>

#include "base/log.h"
#include "kafka/cluster_state.h"
#include "kafka/txn_routing.h"
#include "protocol/messages/write_txn_markers.h"

namespace strata::kafka {
namespace {

using protocol::ErrorCode;
using protocol::WriteTxnMarkersRequest;
using protocol::WriteTxnMarkersResponse;

constexpr int16_t kWriteTxnMarkersVersion = 2;
constexpr std::chrono::milliseconds kFirstBackoff{20};
constexpr std::chrono::milliseconds kMaxBackoff{1000};
// Requests in flight to one broker; markers of transactions ending meanwhile
// wait and go together in the next request (Kafka's per-broker queues).
constexpr int kMaxInFlightPerBroker = 1;
constexpr size_t kMaxMarkersPerRequest = 500;

std::shared_ptr<spdlog::logger> MarkerLog() { return log::Get("coordinator"); }

// What a leader's answer for one partition means for its marker.
enum class MarkerFate : uint8_t { kWritten, kRetry, kGiveUp };

MarkerFate FateOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNone:
    // A partition that cannot hold a marker never will (Kafka drops it too).
    case ErrorCode::kUnsupportedForMessageFormat:
    case ErrorCode::kUnsupportedVersion:
      return MarkerFate::kWritten;
    // A newer coordinator, or a newer epoch of the producer, wrote there.
    case ErrorCode::kInvalidProducerEpoch:
    case ErrorCode::kTransactionCoordinatorFenced:
      return MarkerFate::kGiveUp;
    default:
      return MarkerFate::kRetry;
  }
}

asio::awaitable<void> Sleep(std::chrono::milliseconds d) {
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  co_await timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
}

// The partitions of one transaction whose markers go to one leader.
struct LeaderPartitions {
  LiveBroker broker;
  std::map<std::string, std::vector<int32_t>> partitions;  // by topic
};

// Applies a leader's answer for one transaction's markers (nullptr: the
// request failed, every marker is retried).
void ApplyAnswer(coordinator::TxnCoordinator& coordinator, const MarkerSend& send,
                 const WriteTxnMarkersResponse::Marker* answer) {
  if (answer == nullptr) return;
  for (const auto& t : answer->topics) {
    for (const auto& p : t.partitions) {
      switch (FateOf(static_cast<ErrorCode>(p.error_code))) {
        case MarkerFate::kWritten:
          // Ignored when the transaction is no longer the one these markers
          // were for (the partition was reloaded meanwhile).
          coordinator.MarkerWritten(send.id, {t.name, p.partition_index}, send.sent,
                                    send.coordinator_epoch);
          break;
        case MarkerFate::kGiveUp:
          MarkerLog()->warn("{}: {}-{} refused its marker ({}): left to the next coordinator",
                            send.id, t.name, p.partition_index,
                            protocol::ErrorCodeName(p.error_code));
          send.fanout->give_up = true;
          break;
        case MarkerFate::kRetry:
          MarkerLog()->debug("{}: marker for {}-{}: {}; retrying", send.id, t.name,
                             p.partition_index, protocol::ErrorCodeName(p.error_code));
          break;
      }
    }
  }
}

}  // namespace

TxnMarkerChannel::TxnMarkerChannel(BrokerContext& ctx, coordinator::TxnCoordinator& coordinator,
                                   cluster::MetadataView& view, asio::any_io_executor executor)
    : ctx_(ctx),
      coordinator_(coordinator),
      executor_(executor),
      peers_(view, executor, "strata-txn-markers", ctx.inter_broker_security) {}

TxnMarkerChannel::~TxnMarkerChannel() = default;

void TxnMarkerChannel::Complete(const std::string& transactional_id) {
  asio::post(executor_, [this, id = transactional_id] {
    if (!running_.insert(id).second) {
      // The run under way may be about to give up on an older coordinator
      // epoch: it goes round once more before it stops.
      asked_again_.insert(id);
      return;
    }
    in_flight_.fetch_add(1);
    asio::co_spawn(executor_, Run(id), asio::detached);
  });
}

asio::awaitable<void> TxnMarkerChannel::Run(std::string id) {
  std::chrono::milliseconds backoff = kFirstBackoff;
  for (;;) {
    std::optional<coordinator::TxnMarkers> markers = coordinator_.Markers(id);
    const int32_t partition = coordinator_.PartitionFor(id);
    const std::optional<int32_t> epoch = coordinator_.CoordinatorEpoch(partition);
    if (!markers || !epoch) {  // ended, or no longer coordinated here
      if (asked_again_.erase(id) > 0) continue;
      break;
    }
    if (!markers->partitions.empty()) {
      if (!co_await SendMarkers(id, *markers, *epoch)) {
        // Refused as fenced: a newer coordinator wrote there. If that is
        // this broker again (the partition came back here), go on with it.
        asked_again_.erase(id);
        if (coordinator_.CoordinatorEpoch(partition) == epoch) break;
        continue;
      }
      auto left = coordinator_.Markers(id);
      if (left && !left->partitions.empty()) {
        co_await Sleep(backoff);
        backoff = std::min(backoff * 2, kMaxBackoff);
        continue;
      }
    }
    std::optional<coordinator::TxnWrite> end = coordinator_.CompleteTransaction(id);
    if (end) {
      coordinator::TxnReply reply;
      reply.write = std::move(end);
      const ErrorCode done = co_await SettleTxnReply(ctx_, reply);
      if (done == ErrorCode::kNone || done == ErrorCode::kNotCoordinator) {
        if (asked_again_.erase(id) > 0) continue;  // reloaded meanwhile: look again
        break;
      }
      MarkerLog()->warn("{}: writing the end of its transaction failed ({}); retrying", id,
                        protocol::ErrorCodeName(static_cast<int16_t>(done)));
    } else if (!coordinator_.Markers(id)) {
      if (asked_again_.erase(id) > 0) continue;
      break;
    }
    co_await Sleep(backoff);
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
  running_.erase(id);
  in_flight_.fetch_sub(1);
}

asio::awaitable<bool> TxnMarkerChannel::SendMarkers(const std::string& id,
                                                    const coordinator::TxnMarkers& markers,
                                                    int32_t coordinator_epoch) {
  // Each partition's leader now; a partition without one waits a round.
  std::map<int32_t, LeaderPartitions> by_leader;
  const std::vector<LiveBroker> live = LiveBrokers(ctx_, InterBrokerListener(ctx_));
  for (const TopicPartition& tp : markers.partitions) {
    auto topic = ctx_.topics.GetTopic(tp.topic);
    if (!topic || tp.partition >= topic->partitions) {
      // Deleted with the transaction open: there is nothing to mark.
      coordinator_.MarkerWritten(id, tp, markers, coordinator_epoch);
      continue;
    }
    const cluster::NodeId leader = PartitionStateOf(ctx_, *topic, tp.partition, live).leader();
    auto broker = std::find_if(live.begin(), live.end(),
                               [&](const LiveBroker& b) { return b.node_id == leader.value(); });
    if (broker == live.end()) continue;
    LeaderPartitions& leader_partitions = by_leader[broker->node_id];
    leader_partitions.broker = *broker;
    leader_partitions.partitions[tp.topic].push_back(tp.partition);
  }
  // To every leader at once; each answer is applied as it comes.
  auto fanout = std::make_shared<MarkerFanout>(executor_);
  fanout->left = by_leader.size();
  for (auto& [node, leader] : by_leader) {
    MarkerSend send{id, {}, markers, coordinator_epoch, fanout};
    send.marker.producer_id = markers.producer_id;
    send.marker.producer_epoch = markers.producer_epoch;
    send.marker.transaction_result = markers.result == coordinator::TxnResult::kCommit;
    send.marker.coordinator_epoch = coordinator_epoch;
    send.marker.transaction_version = static_cast<int8_t>(markers.transaction_version);
    for (auto& [topic, partitions] : leader.partitions)
      send.marker.topics.push_back({topic, std::move(partitions)});
    Enqueue(leader.broker, std::move(send));
  }
  if (fanout->left > 0) {
    co_await fanout->done.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  }
  co_return !fanout->give_up;
}

void TxnMarkerChannel::Enqueue(const LiveBroker& broker, MarkerSend send) {
  BrokerQueue& queue = queues_[broker.node_id];
  queue.broker = broker;
  queue.waiting.push_back(std::move(send));
  if (queue.in_flight < kMaxInFlightPerBroker) {
    ++queue.in_flight;
    asio::co_spawn(executor_, SendQueued(broker.node_id), asio::detached);
  }
}

asio::awaitable<void> TxnMarkerChannel::SendQueued(int32_t node) {
  BrokerQueue& queue = queues_[node];
  while (!queue.waiting.empty()) {
    std::vector<MarkerSend> batch;
    while (!queue.waiting.empty() && batch.size() < kMaxMarkersPerRequest) {
      batch.push_back(std::move(queue.waiting.front()));
      queue.waiting.pop_front();
    }
    WriteTxnMarkersRequest req;
    for (const MarkerSend& send : batch) req.markers.push_back(send.marker);
    requests_sent_.fetch_add(1);
    markers_sent_.fetch_add(batch.size());
    net::Client* client = peers_.At(cluster::NodeId(node), queue.broker.host,
                                    static_cast<uint16_t>(queue.broker.port));
    auto resp = co_await client->Send<WriteTxnMarkersRequest, WriteTxnMarkersResponse>(
        req, kWriteTxnMarkersVersion);
    const bool answered = resp.ok() && resp->markers.size() == batch.size();
    if (!answered) {
      MarkerLog()->debug("WriteTxnMarkers ({} transactions) to node {} failed: {}", batch.size(),
                         node,
                         resp.ok() ? "answer does not match the request" : resp.error().message);
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      ApplyAnswer(coordinator_, batch[i], answered ? &resp->markers[i] : nullptr);
      MarkerFanout& fanout = *batch[i].fanout;
      if (--fanout.left == 0) fanout.done.cancel();
    }
  }
  --queue.in_flight;
}

}  // namespace strata::kafka
