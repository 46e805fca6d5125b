#include "net/client.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <asio.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <atomic>
#include <deque>
#include <vector>

#include "net/logger.h"
#include "protocol/api_key.h"
#include "protocol/header.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"
#include "protocol/request_registry.h"

namespace strata::net {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kAsTuple = asio::experimental::as_tuple(asio::use_awaitable);
constexpr int16_t kApiVersionsKey = 18;  // always answers with response header v0

struct Connection {
  explicit Connection(asio::strand<asio::any_io_executor>& strand) : socket(strand) {}
  asio::ip::tcp::socket socket;
  // The context `tls` was made from, held as long as it: a certificate
  // reload swaps the client's context for later connections only.
  std::shared_ptr<asio::ssl::context> tls_context;
  // Over `socket` when the client speaks TLS (closing the socket ends it).
  std::unique_ptr<asio::ssl::stream<asio::ip::tcp::socket&>> tls;
  // When the SASL session ends (KIP-368): the connection is not reused
  // after this.
  std::chrono::steady_clock::time_point reauthenticate_at =
      std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point idle_since;  // when last put back in the pool
};

// Writes or reads all of `buffers` on the connection's TLS stream, or its
// socket.
template <typename Buffers>
asio::awaitable<std::tuple<asio::error_code, size_t>> WriteAll(Connection& conn,
                                                               const Buffers& buffers) {
  if (conn.tls) co_return co_await asio::async_write(*conn.tls, buffers, kAsTuple);
  co_return co_await asio::async_write(conn.socket, buffers, kAsTuple);
}
template <typename Buffers>
asio::awaitable<std::tuple<asio::error_code, size_t>> ReadAll(Connection& conn,
                                                              const Buffers& buffers) {
  if (conn.tls) co_return co_await asio::async_read(*conn.tls, buffers, kAsTuple);
  co_return co_await asio::async_read(conn.socket, buffers, kAsTuple);
}
using ConnectionPtr = std::shared_ptr<Connection>;

// Closes the socket of `conn` at `deadline` unless cancelled first: an
// expired call then fails its pending read or write at once.
class Watchdog {
 public:
  Watchdog(asio::strand<asio::any_io_executor>& strand, Clock::time_point deadline,
           ConnectionPtr conn)
      : timer_(strand, deadline), fired_(std::make_shared<bool>(false)) {
    timer_.async_wait([conn = std::move(conn), fired = fired_](asio::error_code ec) {
      if (ec) return;
      *fired = true;
      conn->socket.close(ec);
    });
  }
  ~Watchdog() { timer_.cancel(); }
  bool fired() const { return *fired_; }

 private:
  asio::steady_timer timer_;
  std::shared_ptr<bool> fired_;
};

}  // namespace

struct Client::Pool {
  Pool(asio::any_io_executor executor, std::string h, uint16_t p, ClientOptions o)
      : strand(asio::make_strand(executor)),
        host(std::move(h)),
        port(p),
        options(std::move(o)),
        backoff(options.reconnect_backoff) {}

  std::string Peer() const { return fmt::format("{}:{}", host, port); }

  asio::awaitable<Result<ConnectionPtr>> Acquire(Clock::time_point deadline);
  asio::awaitable<Result<ConnectionPtr>> Connect(Clock::time_point deadline);
  // The TLS handshake on a new connection (options.security.tls set).
  asio::awaitable<asio::error_code> Handshake(Connection& conn);
  // SASL authentication on a new connection (options.security.sasl set).
  asio::awaitable<Status> Authenticate(Connection& conn);
  // One request of an exchange on a connection not yet in the pool.
  template <class Req, class Resp>
  asio::awaitable<Result<Resp>> SendOn(Connection& conn, Req& request, int16_t version);
  asio::awaitable<Result<Response>> Exchange(Connection& conn, const Bytes& frame,
                                             int32_t correlation_id, bool flexible_response,
                                             bool& broken);
  void Release(ConnectionPtr conn, bool healthy);
  void WakeOneWaiter();
  void CloseAll();

  asio::strand<asio::any_io_executor> strand;
  const std::string host;
  const uint16_t port;
  const ClientOptions options;

  // Strand-only state.
  std::vector<ConnectionPtr> idle;
  std::vector<ConnectionPtr> busy;
  int connecting = 0;
  std::deque<std::shared_ptr<asio::steady_timer>> waiters;
  Clock::time_point backoff_until{};
  std::chrono::milliseconds backoff;
  bool closed = false;

  std::atomic<int32_t> next_correlation_id{1};
  std::atomic<int> open{0};
};

Client::Client(asio::any_io_executor executor, std::string host, uint16_t port,
               ClientOptions options)
    : pool_(
          std::make_shared<Pool>(std::move(executor), std::move(host), port, std::move(options))) {}

Client::~Client() { Close(); }

const std::string& Client::host() const { return pool_->host; }
uint16_t Client::port() const { return pool_->port; }
int Client::open_connections() const { return pool_->open.load(); }

void Client::Close() {
  asio::dispatch(pool_->strand, [pool = pool_] { pool->CloseAll(); });
}

void Client::Pool::CloseAll() {
  closed = true;
  asio::error_code ec;
  for (auto& c : idle) c->socket.close(ec);
  for (auto& c : busy) c->socket.close(ec);  // their calls fail and release them
  open -= int(idle.size());
  idle.clear();
  for (auto& w : waiters) w->cancel();
  waiters.clear();
}

asio::awaitable<Result<Response>> Client::Call(int16_t api_key, int16_t version, Bytes body) {
  return Call(api_key, version, std::move(body), Clock::now() + pool_->options.request_timeout);
}

namespace {

// The request frame: size prefix, request header (v2 when the version is
// flexible), body.
Bytes EncodeRequestFrame(int16_t api_key, int16_t version, int32_t correlation_id,
                         const std::string& client_id, const Bytes& body) {
  Bytes frame(4, 0);
  protocol::WireWriter w(frame, protocol::RequestIsFlexible(api_key, version));
  protocol::RequestHeader header{api_key, version, correlation_id, client_id};
  protocol::WriteRequestHeader(w, header);
  frame.insert(frame.end(), body.begin(), body.end());
  StoreBE32(frame.data(), static_cast<uint32_t>(frame.size() - 4));
  return frame;
}

}  // namespace

asio::awaitable<Result<Response>> Client::Call(int16_t api_key, int16_t version, Bytes body,
                                               Clock::time_point deadline) {
  auto pool = pool_;
  auto call = [](std::shared_ptr<Pool> pool, int16_t api_key, int16_t version, Bytes body,
                 Clock::time_point deadline) -> asio::awaitable<std::optional<Result<Response>>> {
    auto conn = co_await pool->Acquire(deadline);
    if (!conn.ok()) co_return Result<Response>(conn.take_error());
    const int32_t correlation_id = pool->next_correlation_id.fetch_add(1);
    const Bytes frame =
        EncodeRequestFrame(api_key, version, correlation_id, pool->options.client_id, body);
    const bool flexible_response =
        api_key != kApiVersionsKey && protocol::RequestIsFlexible(api_key, version);
    bool broken = false;
    Result<Response> response = MakeError(Errc::kTimeout, "not sent");
    {
      Watchdog watchdog(pool->strand, deadline, *conn);
      response = co_await pool->Exchange(**conn, frame, correlation_id, flexible_response, broken);
      if (!response.ok() && watchdog.fired()) {
        response = MakeError(Errc::kTimeout,
                             fmt::format("{} v{} to {}: no response by the deadline",
                                         protocol::ApiKeyName(api_key), version, pool->Peer()));
      }
    }
    pool->Release(std::move(*conn), !broken && response.ok());
    co_return response;
  };
  // The pool's state is strand-only: run the call there; co_spawn with
  // use_awaitable resumes this coroutine on its own executor. (The optional:
  // co_spawn needs a default-constructible result.)
  auto outcome =
      co_await asio::co_spawn(pool->strand, call(pool, api_key, version, std::move(body), deadline),
                              asio::experimental::as_tuple(asio::use_awaitable));
  auto& [error, result] = outcome;
  if (error || !result) co_return MakeError(Errc::kIoError, "outbound call ended abnormally");
  co_return std::move(*result);
}

asio::awaitable<Result<ConnectionPtr>> Client::Pool::Acquire(Clock::time_point deadline) {
  for (;;) {
    if (closed) co_return MakeError(Errc::kShuttingDown, "client to " + Peer() + " is closed");
    if (!idle.empty()) {
      ConnectionPtr conn = std::move(idle.back());
      idle.pop_back();
      const auto now = Clock::now();
      if (now >= conn->reauthenticate_at || now - conn->idle_since >= options.max_idle) {
        // Its SASL session is (nearly) over: a new connection authenticates
        // afresh rather than re-authenticating this one. Or it sat idle so
        // long that the server may be closing it.
        asio::error_code ec;
        conn->socket.close(ec);
        --open;
        continue;
      }
      busy.push_back(conn);
      co_return conn;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      co_return MakeError(Errc::kTimeout, "no connection to " + Peer() + " by the deadline");
    }
    if (int(busy.size()) + connecting < options.max_connections) {
      if (now < backoff_until) {
        co_return MakeError(
            Errc::kUnavailable,
            fmt::format("{} unreachable; reconnecting in {} ms", Peer(),
                        std::chrono::duration_cast<std::chrono::milliseconds>(backoff_until - now)
                            .count()));
      }
      co_return co_await Connect(deadline);
    }
    // Every connection is busy: wait for one to come back (or the deadline).
    auto waiter = std::make_shared<asio::steady_timer>(strand, deadline);
    waiters.push_back(waiter);
    co_await waiter->async_wait(kAsTuple);
    std::erase(waiters, waiter);
  }
}

asio::awaitable<Result<ConnectionPtr>> Client::Pool::Connect(Clock::time_point deadline) {
  ++connecting;
  auto conn = std::make_shared<Connection>(strand);
  asio::error_code ec;
  std::string sasl_error;
  {
    Watchdog watchdog(strand, std::min(deadline, Clock::now() + options.connect_timeout), conn);
    asio::ip::tcp::resolver resolver(strand);
    auto [resolve_ec, endpoints] =
        co_await resolver.async_resolve(host, std::to_string(port), kAsTuple);
    ec = resolve_ec;
    if (!ec) {
      auto [connect_ec, endpoint] = co_await asio::async_connect(conn->socket, endpoints, kAsTuple);
      ec = connect_ec;
      if (!ec && options.security.tls) ec = co_await Handshake(*conn);
      if (!ec && options.security.sasl) {
        Status authenticated = co_await Authenticate(*conn);
        if (!authenticated.ok()) {
          sasl_error = authenticated.error().message;
          ec = asio::error::access_denied;
        }
      }
      if (!ec && watchdog.fired()) ec = asio::error::timed_out;
    }
  }
  --connecting;
  if (ec || closed) {
    if (!sasl_error.empty() && !closed) {
      Log()->warn("SASL authentication to {} failed: {}", Peer(), sasl_error);
    }
    const auto wait = backoff;
    backoff_until = Clock::now() + wait;
    backoff = std::min(backoff * 2, options.reconnect_backoff_max);
    WakeOneWaiter();  // a waiter may now try (and fail fast) itself
    if (closed) co_return MakeError(Errc::kShuttingDown, "client to " + Peer() + " is closed");
    Log()->info("cannot connect to {}: {} (next attempt in {} ms)", Peer(), ec.message(),
                wait.count());
    co_return MakeError(Errc::kUnavailable,
                        fmt::format("cannot connect to {}: {}", Peer(), ec.message()));
  }
  conn->socket.set_option(asio::ip::tcp::no_delay(true), ec);
  backoff = options.reconnect_backoff;
  backoff_until = {};
  ++open;
  busy.push_back(conn);
  co_return conn;
}

asio::awaitable<asio::error_code> Client::Pool::Handshake(Connection& conn) {
  const ClientSecurity& security = options.security;
  conn.tls_context = security.tls_source ? security.tls_source() : nullptr;
  if (conn.tls_context == nullptr) conn.tls_context = security.tls;
  conn.tls =
      std::make_unique<asio::ssl::stream<asio::ip::tcp::socket&>>(conn.socket, *conn.tls_context);
  // SNI, and the name the certificate must carry.
  SSL_set_tlsext_host_name(conn.tls->native_handle(), host.c_str());
  conn.tls->set_verify_mode(asio::ssl::verify_peer);
  if (options.security.verify_hostname) {
    conn.tls->set_verify_callback(asio::ssl::host_name_verification(host));
  }
  auto [ec] = co_await conn.tls->async_handshake(asio::ssl::stream_base::client, kAsTuple);
  if (ec) Log()->warn("TLS handshake with {} failed: {}", Peer(), ec.message());
  co_return ec;
}

template <class Req, class Resp>
asio::awaitable<Result<Resp>> Client::Pool::SendOn(Connection& conn, Req& request,
                                                   int16_t version) {
  const bool flexible = protocol::IsFlexible<Req>(version);
  Bytes body;
  protocol::Encode(request, version, flexible, body);
  const int32_t correlation_id = next_correlation_id.fetch_add(1);
  const Bytes frame =
      EncodeRequestFrame(Req::kApiKey, version, correlation_id, options.client_id, body);
  bool broken = false;
  auto response = co_await Exchange(conn, frame, correlation_id, flexible, broken);
  if (!response.ok()) co_return response.take_error();
  co_return protocol::Decode<Resp>(response->body(), version, flexible);
}

asio::awaitable<Status> Client::Pool::Authenticate(Connection& conn) {
  const ClientSasl& sasl = *options.security.sasl;
  protocol::SaslHandshakeRequest handshake{sasl.mechanism};
  auto shook = co_await SendOn<protocol::SaslHandshakeRequest, protocol::SaslHandshakeResponse>(
      conn, handshake, 1);
  if (!shook.ok()) co_return shook.take_error();
  if (shook->error_code != 0) {
    co_return MakeError(Errc::kInvalidArgument,
                        fmt::format("{} is not enabled there (enabled: {})", sasl.mechanism,
                                    fmt::join(shook->mechanisms, ",")));
  }
  auto made = SaslClientSteps::Make(sasl);
  if (!made.ok()) co_return made.take_error();
  std::unique_ptr<SaslClientSteps> steps = std::move(made).value();
  Bytes server_token;
  for (;;) {
    auto next = steps->Next(server_token);
    if (!next.ok()) co_return next.take_error();
    std::optional<Bytes> token = std::move(next).value();
    if (!token) co_return Status::Ok();
    protocol::SaslAuthenticateRequest round{std::move(*token)};
    auto answer =
        co_await SendOn<protocol::SaslAuthenticateRequest, protocol::SaslAuthenticateResponse>(
            conn, round, 2);
    if (!answer.ok()) co_return answer.take_error();
    if (answer->error_code != 0) {
      co_return MakeError(Errc::kInvalidArgument,
                          answer->error_message.value_or("authentication failed"));
    }
    if (answer->session_lifetime_ms > 0) {
      // Kafka's clients re-authenticate at 85-95 % of the lifetime; this one
      // retires the connection at 80 %.
      conn.reauthenticate_at =
          Clock::now() + std::chrono::milliseconds(answer->session_lifetime_ms * 8 / 10);
    }
    server_token = std::move(answer->auth_bytes);
  }
}

asio::awaitable<Result<Response>> Client::Pool::Exchange(Connection& conn, const Bytes& frame,
                                                         int32_t correlation_id,
                                                         bool flexible_response, bool& broken) {
  broken = true;  // until a whole, matching response has been read
  auto fail = [&](std::string what) -> Error {
    return MakeError(Errc::kUnavailable, fmt::format("{}: {}", Peer(), what));
  };
  auto [write_ec, written] = co_await WriteAll(conn, asio::buffer(frame));
  if (write_ec) co_return fail("send failed: " + write_ec.message());
  uint8_t size_buf[4];
  auto [size_ec, size_read] = co_await ReadAll(conn, asio::buffer(size_buf));
  if (size_ec) co_return fail("receive failed: " + size_ec.message());
  const int32_t size = static_cast<int32_t>(LoadBE32(size_buf));
  if (size < 4 || size > options.max_response_bytes) {
    co_return fail(
        fmt::format("response size {} outside [4, {}]", size, options.max_response_bytes));
  }
  Response response;
  response.frame.resize(size_t(size));
  auto [body_ec, body_read] = co_await ReadAll(conn, asio::buffer(response.frame));
  if (body_ec) co_return fail("receive failed: " + body_ec.message());
  protocol::WireReader reader(MutableByteView(response.frame), flexible_response);
  int32_t got = 0;
  reader.i32(got);
  if (flexible_response) reader.tagged_fields();
  if (!reader.ok()) co_return fail("malformed response header: " + reader.error());
  if (got != correlation_id) {
    co_return fail(fmt::format("response correlation id {} for request {}", got, correlation_id));
  }
  response.body_offset = reader.position();
  broken = false;
  co_return response;
}

void Client::Pool::Release(ConnectionPtr conn, bool healthy) {
  std::erase(busy, conn);
  if (healthy && !closed) {
    conn->idle_since = Clock::now();
    idle.push_back(std::move(conn));
  } else {
    asio::error_code ec;
    conn->socket.close(ec);
    --open;
  }
  WakeOneWaiter();
}

void Client::Pool::WakeOneWaiter() {
  if (waiters.empty()) return;
  auto waiter = std::move(waiters.front());
  waiters.pop_front();
  waiter->cancel();
}

}  // namespace strata::net
