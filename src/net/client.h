#pragma once
// Client: the broker's outbound Kafka-protocol connections to one other
// broker, for broker-to-broker requests (forwarding to the active controller;
// follower fetch). Built on the same Serde messages as the server side.
//
// A call takes an idle connection of the pool, opens a new one while fewer
// than max_connections exist, or waits for one to come back. A connection
// carries one request at a time, so its response must bear the request's
// correlation id; anything else closes the connection. A failed connect backs
// off exponentially (Kafka clients' reconnect.backoff.ms to
// reconnect.backoff.max.ms) and calls made during the backoff fail at once
// with kUnavailable; a call that outlives its deadline closes its connection
// and fails with kTimeout. Every failure is retriable for the caller.
//
// Threading: the pool lives on one strand; Call may be awaited from any
// executor (it hops to the strand and its continuation comes back to the
// caller's executor). The pool's state is shared with calls in flight, so
// destroying the Client while a call runs is safe: Close fails waiters and
// closes the sockets, and the calls end with an error.
#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <asio/ssl.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "base/result.h"
#include "net/client_sasl.h"
#include "protocol/message.h"

namespace strata::net {

// How a client secures its connections (the inter-broker listener's security
// protocol, or the CLI's --command-config).
struct ClientSecurity {
  // Set to speak TLS (SSL, SASL_SSL): each connection starts with a
  // handshake, and the server's certificate must name `host` when
  // `verify_hostname` (Kafka's ssl.endpoint.identification.algorithm=https).
  std::shared_ptr<asio::ssl::context> tls;
  // When set, asked for the context of each new connection instead of `tls`
  // (a client certificate replaced without a restart; null: use `tls`).
  std::function<std::shared_ptr<asio::ssl::context>()> tls_source;
  bool verify_hostname = true;
  // Set to authenticate each connection with SASL (SASL_PLAINTEXT,
  // SASL_SSL) before its first request. A connection whose session lifetime
  // (KIP-368) is mostly spent is closed instead of reused.
  std::optional<ClientSasl> sasl;
};

struct ClientOptions {
  std::string client_id = "strata-broker";
  std::chrono::milliseconds request_timeout{30000};
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds reconnect_backoff{50};
  std::chrono::milliseconds reconnect_backoff_max{1000};
  int max_connections = 4;
  // A pooled connection idle this long is closed instead of reused (Kafka
  // clients' connections.max.idle.ms): brokers close theirs after 10 min,
  // and a request sent on a connection the server is closing would fail.
  std::chrono::milliseconds max_idle{540000};
  int32_t max_response_bytes = 104857600;
  ClientSecurity security;
};

// One response as received: the frame after its size prefix. `body` points
// into `frame` (after the response header).
struct Response {
  Bytes frame;
  size_t body_offset = 0;
  MutableByteView body() { return MutableByteView(frame).subspan(body_offset); }
};

class Client {
 public:
  Client(asio::any_io_executor executor, std::string host, uint16_t port,
         ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends one request of `api_key`/`version` whose encoded body is `body`
  // and returns its response, by `deadline` at the latest.
  asio::awaitable<Result<Response>> Call(int16_t api_key, int16_t version, Bytes body,
                                         std::chrono::steady_clock::time_point deadline);
  asio::awaitable<Result<Response>> Call(int16_t api_key, int16_t version, Bytes body);

  // Encodes `request`, sends it and decodes the response as `Resp`.
  template <class Req, class Resp>
  asio::awaitable<Result<Resp>> Send(Req& request, int16_t version) {
    const bool flexible = protocol::IsFlexible<Req>(version);
    Bytes body;
    protocol::Encode(request, version, flexible, body);
    auto response = co_await Call(Req::kApiKey, version, std::move(body));
    if (!response.ok()) co_return response.take_error();
    co_return protocol::Decode<Resp>(response->body(), version, flexible);
  }

  // Fails waiting calls and closes every connection; later calls fail.
  void Close();

  const std::string& host() const;
  uint16_t port() const;
  // Connections open now (for tests and metrics).
  int open_connections() const;

  struct Pool;  // the shared state; defined in client.cc

 private:
  std::shared_ptr<Pool> pool_;
};

}  // namespace strata::net
