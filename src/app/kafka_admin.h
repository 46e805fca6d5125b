#pragma once
// KafkaAdmin: the `strata` CLI's connection to a cluster over the Kafka
// protocol, with the broker's own outbound client and messages. Calls are
// synchronous (the CLI does one thing at a time): each runs on a private
// io_context thread and is waited for here. Requests go to the bootstrap
// broker unless a node is named (coordinators, partition leaders); brokers
// forward controller-bound requests themselves.
//
// Thread-safety: one thread at a time.
#include <asio/co_spawn.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/use_future.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "net/client.h"
#include "protocol/messages/metadata.h"

namespace strata::app {

// Versions the CLI speaks (every one Strata and Kafka 3.x/4.x brokers serve).
inline constexpr int16_t kMetadataVersion = 12;

class KafkaAdmin {
 public:
  // `bootstrap`: host:port[,host:port...]; the first that answers Metadata.
  // `security`: TLS and SASL as --command-config gives them.
  static Result<std::unique_ptr<KafkaAdmin>> Connect(const std::string& bootstrap,
                                                     std::chrono::milliseconds timeout,
                                                     net::ClientSecurity security = {});
  explicit KafkaAdmin(std::chrono::milliseconds timeout);
  ~KafkaAdmin();
  KafkaAdmin(const KafkaAdmin&) = delete;
  KafkaAdmin& operator=(const KafkaAdmin&) = delete;

  // Sends `req` to `node` (-1: the bootstrap broker) and waits for the answer.
  template <class Req, class Resp>
  Result<Resp> Call(Req& req, int16_t version, int32_t node = -1) {
    net::Client* client = ClientFor(node);
    if (client == nullptr) {
      return MakeError(Errc::kUnavailable, "broker " + std::to_string(node) + " is not known");
    }
    std::optional<Result<Resp>> out;
    auto call = [&]() -> asio::awaitable<void> {
      out.emplace(co_await client->Send<Req, Resp>(req, version));
    };
    auto done = asio::co_spawn(io_, call(), asio::use_future);
    if (done.wait_for(timeout_ + std::chrono::seconds(5)) != std::future_status::ready) {
      return MakeError(Errc::kTimeout,
                       "no answer within " + std::to_string(timeout_.count()) + " ms");
    }
    done.get();
    return std::move(*out);
  }

  // Metadata of `topics` (nullopt: every topic); remembers the brokers.
  Result<protocol::MetadataResponse> Metadata(
      const std::optional<std::vector<std::string>>& topics = std::nullopt);
  // The node coordinating `group` (FindCoordinator).
  Result<int32_t> GroupCoordinator(const std::string& group);
  // Every broker the last Metadata named.
  std::vector<int32_t> Brokers() const;

 private:
  net::Client* ClientFor(int32_t node);
  net::ClientOptions Options() const;

  std::chrono::milliseconds timeout_;
  net::ClientSecurity security_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
  std::unique_ptr<net::Client> bootstrap_;
  std::map<int32_t, std::pair<std::string, int32_t>> addresses_;
  std::map<int32_t, std::unique_ptr<net::Client>> nodes_;
};

// "TOPIC_ALREADY_EXISTS: <message>" for a Kafka error, or "" for none.
std::string DescribeError(int16_t code, const std::optional<std::string>& message);

}  // namespace strata::app
