#include "net/server.h"

#include <fmt/format.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <cerrno>

#include "base/log.h"
#include "net/logger.h"
#include "protocol/api_key.h"
#include "protocol/header.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/wire.h"

namespace strata::net {

namespace {
constexpr int32_t kMinFrame = 8;  // api key, version, correlation id
}  // namespace

Server::Server(asio::io_context& io, IoContextPool& connections, ServerOptions options,
               RequestHandler& handler)
    : io_(io),
      connections_(connections),
      options_(std::move(options)),
      handler_(handler),
      acceptor_(io) {}

Status Server::Start() {
  asio::error_code ec;
  auto address = asio::ip::make_address(options_.host, ec);
  if (ec) {
    // A host name: resolve it once at start-up.
    asio::ip::tcp::resolver resolver(io_);
    auto results = resolver.resolve(options_.host, std::to_string(options_.port), ec);
    if (ec || results.empty()) {
      return MakeError(Errc::kIoError,
                       fmt::format("cannot resolve {}: {}", options_.host, ec.message()));
    }
    address = results.begin()->endpoint().address();
  }
  asio::ip::tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return MakeError(Errc::kIoError, fmt::format("cannot listen on {}:{}: {}", options_.host,
                                                 options_.port, ec.message()));
  }
  bound_port_ = acceptor_.local_endpoint().port();
  asio::co_spawn(io_, AcceptLoop(), asio::detached);
  return Status::Ok();
}

void Server::Stop() {
  asio::post(io_, [this] {
    asio::error_code ec;
    acceptor_.close(ec);
  });
}

asio::awaitable<void> Server::AcceptLoop() {
  for (;;) {
    // Accepted on the acceptor's own context, then handed to a connection
    // context by descriptor: a pending accept then never holds a socket of
    // another context, which may be destroyed first at shutdown.
    auto [ec, accepted] =
        co_await acceptor_.async_accept(asio::experimental::as_tuple(asio::use_awaitable));
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
      Log()->warn("accept failed: {}", ec.message());
      continue;
    }
    asio::error_code opt_ec;
    accepted.set_option(asio::ip::tcp::no_delay(true), opt_ec);
    const auto protocol = accepted.local_endpoint(opt_ec).protocol();
    if (opt_ec) continue;  // the peer already went away
    const int fd = accepted.release(opt_ec);
    if (opt_ec) continue;
    asio::ip::tcp::socket socket(connections_.Next());
    socket.assign(protocol, fd, opt_ec);
    if (opt_ec) {
      Log()->warn("dropping an accepted connection: {}", opt_ec.message());
      ::close(fd);
      continue;
    }
    auto executor = socket.get_executor();
    asio::co_spawn(executor, Session(std::move(socket)), asio::detached);
  }
}

// One connection's state, shared by its serving coroutine and its idle watch
// (both on the connection's context).
struct Server::Connection {
  explicit Connection(bool sasl) : auth(sasl) {}
  std::string peer = "unknown";
  ConnectionAuth auth;
  asio::ip::tcp::socket* socket = nullptr;  // null once the connection ends
  std::optional<asio::steady_timer> idle_timer;
  int64_t last_active_ms = ConnectionAuth::NowMs();
  bool busy = false;  // a request is being handled
};

asio::awaitable<void> Server::Session(asio::ip::tcp::socket socket) {
  auto conn = std::make_shared<Connection>(options_.sasl);
  asio::error_code ec;
  auto remote = socket.remote_endpoint(ec);
  if (!ec) conn->peer = fmt::format("{}:{}", remote.address().to_string(), remote.port());
  ++open_connections_;
  // Held for the connection's life: a certificate reload swaps the
  // listener's context for later connections only.
  std::shared_ptr<asio::ssl::context> tls_context =
      options_.tls_source ? options_.tls_source() : options_.tls;
  if (tls_context == nullptr) {
    conn->socket = &socket;
    asio::co_spawn(socket.get_executor(), IdleWatch(conn, socket), asio::detached);
    co_await Serve(socket, *conn);
  } else {
    asio::ssl::stream<asio::ip::tcp::socket> tls(std::move(socket), *tls_context);
    conn->socket = &tls.next_layer();
    asio::co_spawn(tls.get_executor(), IdleWatch(conn, tls.next_layer()), asio::detached);
    auto [handshake] = co_await tls.async_handshake(
        asio::ssl::stream_base::server, asio::experimental::as_tuple(asio::use_awaitable));
    if (handshake) {
      // A plaintext client, an untrusted certificate, no common version.
      Log()->info("closing connection {} on listener {}: TLS handshake failed: {}", conn->peer,
                  options_.listener_name, handshake.message());
    } else {
      Result<security::KafkaPrincipal> principal = security::KafkaPrincipal::Anonymous();
      if (options_.tls_principal) {
        X509* cert = SSL_get1_peer_certificate(tls.native_handle());
        principal = options_.tls_principal(cert);
        X509_free(cert);
      }
      if (principal.ok()) {
        conn->auth.set_principal(std::move(principal).value());
        co_await Serve(tls, *conn);
      } else {
        Log()->info("closing connection {} on listener {}: {} (ssl.principal.mapping.rules)",
                    conn->peer, options_.listener_name, principal.error().message);
      }
    }
    tls.next_layer().close(ec);
  }
  conn->socket = nullptr;
  if (conn->idle_timer) conn->idle_timer->cancel();
  socket.close(ec);
  --open_connections_;
}

asio::awaitable<void> Server::IdleWatch(std::shared_ptr<Connection> conn,
                                        asio::ip::tcp::socket& socket) {
  if (options_.max_idle_ms <= 0) co_return;
  conn->idle_timer.emplace(socket.get_executor());
  while (conn->socket != nullptr) {
    const int64_t idle_until = conn->last_active_ms + options_.max_idle_ms;
    const int64_t now = ConnectionAuth::NowMs();
    if (!conn->busy && now >= idle_until) {
      Log()->info(
          "closing connection {} on listener {}: idle for {} ms{} (connections.max.idle.ms)",
          conn->peer, options_.listener_name, now - conn->last_active_ms,
          conn->auth.state() == ConnectionAuth::State::kAuthenticated ? ""
                                                                      : " without authenticating");
      asio::error_code ec;
      socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
      socket.close(ec);
      co_return;
    }
    conn->idle_timer->expires_after(
        std::chrono::milliseconds(std::max<int64_t>(idle_until - now, 10)));
    auto [ec] =
        co_await conn->idle_timer->async_wait(asio::experimental::as_tuple(asio::use_awaitable));
    (void)ec;  // cancelled at the end of the connection: the loop sees it
  }
}

template <typename Stream>
asio::awaitable<void> Server::Serve(Stream& stream, Connection& conn) {
  const std::string& peer = conn.peer;
  try {
    while (co_await ServeOne(stream, conn)) {
    }
  } catch (const asio::system_error& e) {
    if (e.code() != asio::error::eof && e.code() != asio::error::connection_reset &&
        e.code() != asio::error::operation_aborted && e.code() != asio::error::bad_descriptor &&
        e.code() != asio::ssl::error::stream_truncated) {
      Log()->info("connection {} closed: {}", peer, e.code().message());
    }
  } catch (const std::exception& e) {
    // Last-resort guard: one bad connection must never take the broker down.
    Log()->error("connection {} closed after unexpected error: {}", peer, e.what());
  }
}

Status ParseRequestFrame(Request& req,
                         const std::function<bool(int16_t api_key, int16_t version)>& flexible) {
  MutableByteView frame(req.frame.get(), req.frame_size);
  if (frame.size() < 4) return MakeError(Errc::kCorrupt, "request frame shorter than its header");
  const auto key = static_cast<int16_t>(LoadBE16(frame.data()));
  const auto version = static_cast<int16_t>(LoadBE16(frame.data() + 2));
  req.flexible = flexible(key, version);
  protocol::WireReader reader(frame, req.flexible);
  protocol::ReadRequestHeader(reader, req.header);
  if (!reader.ok()) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("malformed {} v{} request header: {}", protocol::ApiKeyName(key),
                                 version, reader.error()));
  }
  req.body = frame.subspan(reader.position());
  return Status::Ok();
}

// Reads, handles and answers one request. Returns false to close.
template <typename Stream>
asio::awaitable<bool> Server::ServeOne(Stream& socket, Connection& conn) {
  const std::string& peer = conn.peer;
  uint8_t size_buf[4];
  co_await asio::async_read(socket, asio::buffer(size_buf), asio::use_awaitable);
  conn.last_active_ms = ConnectionAuth::NowMs();
  int32_t size = static_cast<int32_t>(LoadBE32(size_buf));
  // Until it authenticates a client may not make the broker hold large
  // frames (sasl.server.max.receive.size).
  const bool authenticated = conn.auth.state() == ConnectionAuth::State::kAuthenticated;
  const int32_t max_size =
      authenticated ? options_.max_request_bytes : options_.sasl_max_receive_bytes;
  // A bare SASL token (after SaslHandshake v0) has no request header: any
  // size, even 0 (OAUTHBEARER's one-byte answer, a short PLAIN login).
  const int32_t min_size = conn.auth.awaiting_raw_token() ? 0 : kMinFrame;
  if (size < min_size || size > max_size) {
    Log()->warn("closing connection {}: request size {} outside [{}, {}] ({})", peer, size,
                min_size, max_size,
                authenticated ? "socket.request.max.bytes" : "sasl.server.max.receive.size");
    co_return false;
  }
  Request req;
  req.peer = peer;
  req.listener = options_.listener_name;
  req.auth = &conn.auth;
  req.frame_size = static_cast<size_t>(size);
  req.frame = std::make_unique_for_overwrite<uint8_t[]>(req.frame_size);
  MutableByteView frame(req.frame.get(), req.frame_size);
  co_await asio::async_read(socket, asio::buffer(frame.data(), frame.size()), asio::use_awaitable);

  if (conn.auth.awaiting_raw_token()) co_return co_await ServeRawSaslToken(socket, conn, req);
  Status parsed = ParseRequestFrame(
      req, [this](int16_t k, int16_t v) { return handler_.IsFlexibleRequest(k, v); });
  if (!parsed.ok()) {
    Log()->warn("closing connection {}: {}", peer, parsed.error().message);
    co_return false;
  }
  const int16_t key = req.header.api_key;
  const int16_t version = req.header.api_version;
  if (auto refused = RefusedBeforeAuthentication(conn.auth, key)) {
    Log()->info("closing connection {} on listener {}: {}", peer, options_.listener_name, *refused);
    co_return false;
  }

  conn.busy = true;
  auto result = co_await handler_.Handle(req);
  conn.busy = false;
  conn.last_active_ms = ConnectionAuth::NowMs();
  if (!result.ok()) {
    Log()->warn("closing connection {}: {} v{} (correlation id {}): {}", peer,
                protocol::ApiKeyName(key), version, req.header.correlation_id,
                result.error().message);
    co_return false;
  }
  if (result.value().has_value()) {  // none for acks=0
    co_await WriteResponse(socket, *result.value(), req.response_splices);
  }
  if (req.throttle_ms > 0) {
    // Over a quota: muted until the throttle time has passed.
    asio::steady_timer mute(co_await asio::this_coro::executor);
    mute.expires_after(std::chrono::milliseconds(req.throttle_ms));
    conn.busy = true;  // a muted connection is not idle
    co_await mute.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
    conn.busy = false;
  }
  conn.last_active_ms = ConnectionAuth::NowMs();
  co_return !conn.auth.close_after_response();
}

// After SaslHandshake v0 the client sends each SASL token as a bare frame,
// and gets the broker's as one: served as the SaslAuthenticate v0 request it
// stands for. A failed authentication closes the connection unanswered (the
// bare protocol has no place for an error), as Kafka does.
template <typename Stream>
asio::awaitable<bool> Server::ServeRawSaslToken(Stream& socket, Connection& conn, Request& req) {
  protocol::SaslAuthenticateRequest authenticate;
  authenticate.auth_bytes.assign(req.frame.get(), req.frame.get() + req.frame_size);
  Bytes frame;
  protocol::WireWriter writer(frame, false);
  protocol::WriteRequestHeader(writer,
                               {protocol::SaslAuthenticateRequest::kApiKey, 0, 0, std::nullopt});
  authenticate.Serde(writer, 0);
  req.frame = std::make_unique_for_overwrite<uint8_t[]>(frame.size());
  std::copy(frame.begin(), frame.end(), req.frame.get());
  req.frame_size = frame.size();
  Status parsed = ParseRequestFrame(req, [](int16_t, int16_t) { return false; });
  if (!parsed.ok()) co_return false;
  conn.busy = true;
  auto result = co_await handler_.Handle(req);
  conn.busy = false;
  if (!result.ok() || !result.value().has_value()) co_return false;
  Bytes& out = *result.value();
  protocol::WireReader reader(MutableByteView(out.data(), out.size()), false);
  int32_t correlation_id = 0;
  reader.i32(correlation_id);
  protocol::SaslAuthenticateResponse answer;
  answer.Serde(reader, 0);
  const int16_t error_code = answer.error_code;
  const std::optional<std::string>& message = answer.error_message;
  const Bytes& token = answer.auth_bytes;
  if (!reader.ok() || error_code != 0 || conn.auth.close_after_response()) {
    Log()->info("closing connection {} on listener {}: SASL authentication (bare tokens) failed{}",
                conn.peer, options_.listener_name, message ? ": " + *message : "");
    co_return false;
  }
  co_await WriteResponse(socket, token, {});
  conn.last_active_ms = ConnectionAuth::NowMs();
  co_return true;
}

namespace {

// Sends the whole region with sendfile(2), waiting for the (non-blocking)
// socket to drain when it is full. Throws asio::system_error like the asio
// writes do, which closes the connection.
asio::awaitable<void> SendRegion(asio::ip::tcp::socket& socket, const FileRegion& region) {
  off_t offset = static_cast<off_t>(region.offset);
  uint64_t left = region.length;
  while (left > 0) {
    ssize_t n = ::sendfile(socket.native_handle(), region.fd, &offset, left);
    if (n > 0) {
      left -= uint64_t(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      co_await socket.async_wait(asio::ip::tcp::socket::wait_write, asio::use_awaitable);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      // 0: the file ended early, which log data below the high watermark
      // never does; the client cannot get a whole frame now.
      asio::error_code ec(n == 0 ? EIO : errno, asio::system_category());
      Log()->warn("sendfile of {} bytes at {} failed: {}", left, uint64_t(offset), ec.message());
      throw asio::system_error(ec);
    }
  }
}

}  // namespace

// Copies `region` through a TLS stream (no sendfile under TLS), in large
// writes.
template <typename Stream>
asio::awaitable<void> CopyRegion(Stream& stream, const FileRegion& region) {
  constexpr uint64_t kChunk = 1u << 20;
  std::unique_ptr<uint8_t[]> buf = std::make_unique_for_overwrite<uint8_t[]>(
      static_cast<size_t>(std::min(region.length, kChunk)));
  for (uint64_t done = 0; done < region.length;) {
    const size_t want = static_cast<size_t>(std::min(region.length - done, kChunk));
    if (const int error = PreadAll(region.fd, region.offset + done, buf.get(), want)) {
      asio::error_code ec(error, asio::system_category());
      Log()->warn("reading {} bytes at {} for a TLS response failed: {}", want,
                  region.offset + done, ec.message());
      throw asio::system_error(ec);
    }
    co_await asio::async_write(stream, asio::buffer(buf.get(), want), asio::use_awaitable);
    done += want;
  }
}

template <typename Stream>
asio::awaitable<void> Server::WriteResponse(Stream& socket, const Bytes& payload,
                                            const FileSplices& splices) {
  uint64_t total = payload.size();
  for (const FileSplice& s : splices) total += s.region.length;
  uint8_t out_size[4];
  StoreBE32(out_size, static_cast<uint32_t>(total));
  size_t written = 0;  // of payload
  bool prefix_sent = false;
  auto write_until = [&](size_t at) -> asio::awaitable<void> {
    std::array<asio::const_buffer, 2> buffers{
        asio::buffer(out_size, prefix_sent ? 0 : sizeof(out_size)),
        asio::buffer(payload.data() + written, at - written)};
    co_await asio::async_write(socket, buffers, asio::use_awaitable);
    prefix_sent = true;
    written = at;
  };
  constexpr bool kPlain = std::is_same_v<Stream, asio::ip::tcp::socket>;
  if constexpr (kPlain) {
    if (!splices.empty()) socket.native_non_blocking(true);
  }
  for (const FileSplice& s : splices) {
    co_await write_until(s.at);
    if (s.region.in_memory()) {
      co_await asio::async_write(socket, asio::buffer(s.region.data, s.region.length),
                                 asio::use_awaitable);
    } else if constexpr (kPlain) {
      co_await SendRegion(socket, s.region);
    } else {
      co_await CopyRegion(socket, s.region);
    }
  }
  co_await write_until(payload.size());
}

}  // namespace strata::net
