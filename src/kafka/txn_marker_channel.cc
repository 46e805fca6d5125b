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

// The markers of one transaction bound for one leader.
struct LeaderBatch {
  LiveBroker broker;
  std::map<std::string, std::vector<int32_t>> partitions;  // by topic
};

// The answers of one round's requests, one per leader.
struct Fanout {
  explicit Fanout(const asio::any_io_executor& ex) : done(ex) {
    done.expires_at(asio::steady_timer::time_point::max());
  }
  asio::steady_timer done;  // cancelled when the last answer is in
  size_t left = 0;
  bool give_up = false;
};

// Sends one leader its markers and applies the answer. `client` is not used
// after the call (a later round may replace it).
asio::awaitable<void> SendBatch(coordinator::TxnCoordinator& coordinator, std::string id,
                                net::Client& client, WriteTxnMarkersRequest req,
                                coordinator::TxnMarkers sent, int32_t coordinator_epoch,
                                std::shared_ptr<Fanout> fanout) {
  const std::string peer = fmt::format("{}:{}", client.host(), client.port());
  auto resp = co_await client.Send<WriteTxnMarkersRequest, WriteTxnMarkersResponse>(
      req, kWriteTxnMarkersVersion);
  if (!resp.ok()) {
    MarkerLog()->debug("{}: WriteTxnMarkers to {} failed: {}", id, peer, resp.error().message);
  } else {
    for (const auto& m : resp->markers) {
      for (const auto& t : m.topics) {
        for (const auto& p : t.partitions) {
          switch (FateOf(static_cast<ErrorCode>(p.error_code))) {
            case MarkerFate::kWritten:
              // Ignored when the transaction is no longer the one these
              // markers were for (the partition was reloaded meanwhile).
              coordinator.MarkerWritten(id, {t.name, p.partition_index}, sent, coordinator_epoch);
              break;
            case MarkerFate::kGiveUp:
              MarkerLog()->warn("{}: {}-{} refused its marker ({}): left to the next coordinator",
                                id, t.name, p.partition_index,
                                protocol::ErrorCodeName(p.error_code));
              fanout->give_up = true;
              break;
            case MarkerFate::kRetry:
              MarkerLog()->debug("{}: marker for {}-{}: {}; retrying", id, t.name,
                                 p.partition_index, protocol::ErrorCodeName(p.error_code));
              break;
          }
        }
      }
    }
  }
  if (--fanout->left == 0) fanout->done.cancel();
}

}  // namespace

TxnMarkerChannel::TxnMarkerChannel(BrokerContext& ctx, coordinator::TxnCoordinator& coordinator,
                                   cluster::MetadataView& view, asio::any_io_executor executor)
    : ctx_(ctx),
      coordinator_(coordinator),
      executor_(executor),
      peers_(view, executor, "strata-txn-markers") {}

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
  std::map<int32_t, LeaderBatch> by_leader;
  const std::vector<LiveBroker> live = LiveBrokers(ctx_);
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
    LeaderBatch& batch = by_leader[broker->node_id];
    batch.broker = *broker;
    batch.partitions[tp.topic].push_back(tp.partition);
  }
  // To every leader at once; each answer is applied as it comes.
  auto fanout = std::make_shared<Fanout>(executor_);
  fanout->left = by_leader.size();
  for (auto& [node, batch] : by_leader) {
    WriteTxnMarkersRequest req;
    auto& marker = req.markers.emplace_back();
    marker.producer_id = markers.producer_id;
    marker.producer_epoch = markers.producer_epoch;
    marker.transaction_result = markers.result == coordinator::TxnResult::kCommit;
    marker.coordinator_epoch = coordinator_epoch;
    marker.transaction_version = static_cast<int8_t>(markers.transaction_version);
    for (auto& [topic, partitions] : batch.partitions)
      marker.topics.push_back({topic, std::move(partitions)});
    net::Client* client = peers_.At(cluster::NodeId(node), batch.broker.host,
                                    static_cast<uint16_t>(batch.broker.port));
    asio::co_spawn(
        executor_,
        SendBatch(coordinator_, id, *client, std::move(req), markers, coordinator_epoch, fanout),
        asio::detached);
  }
  if (fanout->left > 0) {
    co_await fanout->done.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  }
  co_return !fanout->give_up;
}

}  // namespace strata::kafka
