#include "balancer/service/produce_to_leader.h"

#include <asio/co_spawn.hpp>
#include <asio/use_future.hpp>

#include "protocol/batch_builder.h"
#include "protocol/messages/produce.h"

namespace strata::balancer {

namespace {
constexpr int16_t kProduceVersion = 9;
}  // namespace

Status ProduceToLeader(PeerClients& peers, const std::string& topic, int32_t partition,
                       const std::vector<std::pair<std::string, std::string>>& records,
                       int64_t timestamp_ms, std::chrono::milliseconds timeout) {
  auto t = peers.view().Topic(topic);
  if (!t) return MakeError(Errc::kNotFound, topic + " does not exist yet");
  auto record = peers.view().Partition(cluster::UuidToBase64(t->record.id), partition);
  if (!record || record->record.leader.value() < 0) {
    return MakeError(Errc::kUnavailable,
                     topic + "-" + std::to_string(partition) + " has no leader");
  }
  net::Client* client = peers.For(record->record.leader);
  if (client == nullptr) return MakeError(Errc::kUnavailable, "its leader is not registered");
  protocol::BatchBuilder batch;
  batch.set_compression(protocol::Compression::kLz4);
  for (const auto& [key, value] : records) batch.Add(key, value, timestamp_ms);
  protocol::ProduceRequest req;
  req.acks = -1;
  req.timeout_ms = static_cast<int32_t>(timeout.count());
  req.topics.push_back({topic, {}});
  req.topics.back().partitions.emplace_back();
  req.topics.back().partitions.back().index = partition;
  req.topics.back().partitions.back().records.Own(batch.Build());
  // The coroutine answers a Status (a future's value must be default
  // constructible); the produce errors are checked inside.
  auto call = [&]() -> asio::awaitable<Status> {
    auto response = co_await client->Send<protocol::ProduceRequest, protocol::ProduceResponse>(
        req, kProduceVersion);
    if (!response.ok()) co_return response.take_error();
    for (const auto& rt : response->topics) {
      for (const auto& p : rt.partitions) {
        if (p.error_code != 0) {
          co_return MakeError(Errc::kUnavailable,
                              "produce error code " + std::to_string(p.error_code));
        }
      }
    }
    co_return Status::Ok();
  };
  auto done = asio::co_spawn(peers.executor(), call(), asio::use_future);
  if (done.wait_for(timeout + std::chrono::seconds(5)) != std::future_status::ready) {
    return MakeError(Errc::kTimeout, "produce to " + topic + " timed out");
  }
  return done.get();
}

}  // namespace strata::balancer
