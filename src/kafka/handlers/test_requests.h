#pragma once
// For tests: a request struct as the network layer hands it to a handler,
// and a handler's response bytes decoded back into the response struct.
#include <gtest/gtest.h>

#include <asio.hpp>

#include "kafka/broker_context.h"
#include "kafka/codec.h"
#include "kafka/handlers/handlers.h"
#include "net/server.h"
#include "protocol/batch_builder.h"
#include "protocol/message.h"
#include "protocol/messages/produce.h"

namespace strata::kafka::testing {

// A request with its body; keep it alive while the handler runs (records
// fields point into the body).
struct EncodedRequest {
  Bytes body;
  net::Request request;
};

template <class Req>
std::unique_ptr<EncodedRequest> Encode(Req& req, int16_t version, int32_t correlation_id = 7) {
  auto out = std::make_unique<EncodedRequest>();
  const bool flexible = protocol::IsFlexible<Req>(version);
  protocol::Encode(req, version, flexible, out->body);
  out->request.header.api_key = Req::kApiKey;
  out->request.header.api_version = version;
  out->request.header.correlation_id = correlation_id;
  out->request.header.client_id = "test";
  out->request.flexible = flexible;
  out->request.body = MutableByteView(out->body);
  out->request.peer = "127.0.0.1:1";
  return out;
}

// The response struct from a handler's bytes (response header v1 when the
// request was flexible, v0 otherwise); a failed test when anything is off.
template <class Resp>
Resp DecodeResponse(const net::Request& request, HandlerResult& result) {
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
  if (!result.ok() || !result->has_value()) return Resp{};
  Bytes& bytes = **result;
  EXPECT_EQ(LoadBE32(bytes.data()), static_cast<uint32_t>(request.header.correlation_id));
  const size_t header = 4 + (request.flexible ? 1 : 0);
  auto resp = protocol::Decode<Resp>(MutableByteView(bytes).subspan(header),
                                     request.header.api_version, request.flexible);
  EXPECT_TRUE(resp.ok()) << (resp.ok() ? "" : resp.error().message);
  return resp.ok() ? std::move(*resp) : Resp{};
}

// Runs a coroutine handler to completion on an io_context of its own.
inline HandlerResult RunAsync(asio::awaitable<HandlerResult> handler) {
  asio::io_context io;
  HandlerResult out = MakeError(Errc::kTimeout, "not run");
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { out = co_await std::move(handler); }, asio::detached);
  io.run();
  return out;
}

// Produces `n` records (key "k", values `value_prefix`0.., timestamps from
// `first_ms` on) to `topic`-`partition` through the Produce handler with
// acks=1; the partition's answer.
inline protocol::ProduceResponse::Partition ProduceRecords(BrokerContext& ctx,
                                                           const std::string& topic,
                                                           int32_t partition, int n,
                                                           const std::string& value_prefix,
                                                           int64_t first_ms = 1000) {
  protocol::BatchBuilder builder;
  for (int i = 0; i < n; ++i) builder.Add("k", value_prefix + std::to_string(i), first_ms + i);
  protocol::ProduceRequest req;
  req.acks = 1;
  auto& t = req.topics.emplace_back();
  t.name = topic;
  auto& p = t.partitions.emplace_back();
  p.index = partition;
  p.records.Own(builder.Build());
  auto call = Encode(req, 9);
  HandlerResult out = RunAsync(HandleProduce(ctx, call->request));
  auto resp = DecodeResponse<protocol::ProduceResponse>(call->request, out);
  EXPECT_EQ(resp.topics.size(), 1u);
  if (resp.topics.empty() || resp.topics[0].partitions.empty()) return {};
  return resp.topics[0].partitions[0];
}

}  // namespace strata::kafka::testing
