#pragma once
// Server: accepts Kafka-protocol TCP connections and runs one coroutine per
// connection that reads size-prefixed request frames, hands each to the
// RequestHandler, and writes the response. Requests on one connection are
// processed strictly one at a time, in order, as Kafka does (a connection is
// "muted" while its request is in flight), so responses never reorder.
//
// Threading: the acceptor runs on `io`; each accepted connection lives on one
// context of an IoContextPool (one thread each), so its coroutine never runs
// on two threads at once. Connections on different contexts run in parallel:
// the handler's state must be thread-safe across connections.
#include <asio.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/ssl.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "base/bytes.h"
#include "base/file_region.h"
#include "base/result.h"
#include "net/connection_auth.h"
#include "net/io_context_pool.h"
#include "protocol/header.h"

namespace strata::net {

struct Request;

// Charges a request's handling time to its client's request quota
// (request_percentage, KIP-124). The Kafka layer implements it; the request
// carries it so that whoever encodes the response can put the throttle into
// the response's throttle_time_ms (KIP-219) before its bytes exist.
class RequestTimeCharger {
 public:
  virtual ~RequestTimeCharger() = default;
  // The throttle time (ms) for the time `request` has taken so far; 0 when
  // within the quota or exempt.
  virtual int32_t Charge(Request& request) = 0;
};

// One decoded request frame. `body` points into `frame` (owned here) and may
// be rewritten in place by the handler (produce offsets).
struct Request {
  protocol::RequestHeader header;
  bool flexible = false;
  // The frame's bytes. Not a Bytes: a vector would zero-fill up to
  // socket.request.max.bytes that the socket read overwrites at once.
  std::unique_ptr<uint8_t[]> frame;
  size_t frame_size = 0;
  MutableByteView body;
  std::string peer;  // "ip:port", for log lines
  // The listener the connection came in on (ServerOptions::listener_name):
  // answers name brokers by their endpoints on it.
  std::string listener = "PLAINTEXT";
  // The connection's authentication (never null for a request read off a
  // socket; null for one unwrapped from an Envelope).
  ConnectionAuth* auth = nullptr;
  // For a request unwrapped from an Envelope: the principal and host of the
  // client the forwarding broker served.
  std::optional<security::KafkaPrincipal> forwarded_principal;
  std::string forwarded_host;
  // Set by a handler when the client is over a quota: the connection reads
  // nothing more for this long after the response (Kafka mutes the channel,
  // KIP-219), and the response says so in throttle_time_ms.
  int32_t throttle_ms = 0;
  // When the dispatcher began handling the request: the request quota is
  // charged the time since, less `waited`.
  std::chrono::steady_clock::time_point started{};
  // Time the handler spent waiting rather than working (a fetch's long poll,
  // acks=all, coordinators, the controller): not charged to the client's
  // request quota, as Kafka counts only request-thread time, not purgatory.
  std::chrono::steady_clock::duration waited{};
  // Charges the request quota once (ChargeRequestTime); null when already
  // charged or never to be (requests unwrapped from an Envelope, tests).
  RequestTimeCharger* request_time_charger = nullptr;
  // Brokers' own work (follower fetches, transaction markers, forwarded
  // requests) is never charged to a request quota, as in Kafka.
  bool quota_exempt = false;
  // Set by a handler whose response carries file regions (Fetch): they are
  // sent at their places in the response buffer (files with sendfile(2)).
  FileSplices response_splices;
};

// Charges `request`'s time so far to its request quota unless that was done
// already; the throttle time in ms (0 when charged before, exempt or within
// the quota). The first call charges: the response encoder where the
// response has throttle_time_ms, else the dispatcher after the handler.
inline int32_t ChargeRequestTime(Request& request) {
  RequestTimeCharger* charger = std::exchange(request.request_time_charger, nullptr);
  return charger == nullptr ? 0 : charger->Charge(request);
}

// Reads the request header of `req.frame` (api key and version first; at
// least 4 bytes) and sets `header`, `flexible` and `body`: the server's
// reading of a frame off a socket, and the Envelope handler's of a
// forwarded one. kCorrupt (with key, version and what was wrong) when the
// header is malformed.
Status ParseRequestFrame(Request& req,
                         const std::function<bool(int16_t api_key, int16_t version)>& flexible);

// What a connection does with a request. Implemented by the broker.
class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  // Whether (key, version) uses the flexible request header (v2).
  virtual bool IsFlexibleRequest(int16_t api_key, int16_t api_version) const = 0;
  // Returns the response payload (response header + body, without the size
  // prefix), or nullopt for no response (acks=0 produce). An error return
  // closes the connection (logged by the server).
  virtual asio::awaitable<Result<std::optional<Bytes>>> Handle(Request& request) = 0;
};

struct ServerOptions {
  std::string listener_name = "PLAINTEXT";
  std::string host = "127.0.0.1";
  uint16_t port = 9092;
  int32_t max_request_bytes = 104857600;  // socket.request.max.bytes
  // Set for an SSL listener: connections start with a TLS handshake. Fetch
  // data is then copied through TLS instead of sendfile(2).
  std::shared_ptr<asio::ssl::context> tls;
  // When set, asked for the context of each new connection instead of `tls`
  // (a listener whose certificate can be replaced while it runs).
  std::function<std::shared_ptr<asio::ssl::context>()> tls_source;
  // The principal of a TLS client from its certificate (null or absent:
  // User:ANONYMOUS), ssl.principal.mapping.rules applied; an error (no rule
  // maps the name) closes the connection.
  std::function<Result<security::KafkaPrincipal>(X509* peer_certificate)> tls_principal;
  // SASL_PLAINTEXT / SASL_SSL: requests wait for SASL authentication, whose
  // frames may be at most sasl.server.max.receive.size bytes.
  bool sasl = false;
  int32_t sasl_max_receive_bytes = 524288;
  // connections.max.idle.ms: a connection without a request for this long
  // is closed (so is one that never authenticates).
  int64_t max_idle_ms = 600000;
};

class Server {
 public:
  Server(asio::io_context& io, IoContextPool& connections, ServerOptions options,
         RequestHandler& handler);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts accepting. Fails (kIoError) if the address is unusable.
  Status Start();
  // Stops accepting; open connections close when their contexts stop.
  void Stop();
  uint16_t bound_port() const { return bound_port_; }
  int64_t connections() const { return open_connections_.load(); }

 private:
  asio::awaitable<void> AcceptLoop();
  struct Connection;
  asio::awaitable<void> Session(asio::ip::tcp::socket socket);
  // Closes `conn`'s socket once it has been idle for max_idle_ms.
  asio::awaitable<void> IdleWatch(std::shared_ptr<Connection> conn, asio::ip::tcp::socket& socket);
  // Serves requests on `stream` (a socket, or a TLS stream over one) until
  // the connection ends.
  template <typename Stream>
  asio::awaitable<void> Serve(Stream& stream, Connection& conn);
  template <typename Stream>
  asio::awaitable<bool> ServeOne(Stream& stream, Connection& conn);
  template <typename Stream>
  asio::awaitable<bool> ServeRawSaslToken(Stream& stream, Connection& conn, Request& req);
  // Writes the size prefix, `payload` and the spliced file regions in order.
  template <typename Stream>
  asio::awaitable<void> WriteResponse(Stream& stream, const Bytes& payload,
                                      const FileSplices& splices);

  asio::io_context& io_;
  IoContextPool& connections_;
  ServerOptions options_;
  RequestHandler& handler_;
  asio::ip::tcp::acceptor acceptor_;
  uint16_t bound_port_ = 0;
  std::atomic<int64_t> open_connections_{0};
};

}  // namespace strata::net
