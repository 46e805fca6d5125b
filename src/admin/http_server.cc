#include "admin/http_server.h"

#include <fmt/format.h>

#include <asio/experimental/as_tuple.hpp>
#include <cctype>
#include <type_traits>

#include "admin/logger.h"
#include "base/log.h"

namespace strata::admin {

namespace {
constexpr size_t kMaxRequestHeader = 16 * 1024;

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    default:
      return "Error";
  }
}
// The token of an "Authorization: Bearer <token>" header, if any.
std::optional<std::string_view> BearerToken(std::string_view head) {
  size_t at = 0;
  while ((at = head.find("\r\n", at)) != std::string_view::npos) {
    at += 2;
    std::string_view line = head.substr(at, head.find("\r\n", at) - at);
    constexpr std::string_view kName = "authorization:";
    if (line.size() < kName.size()) continue;
    bool match = true;
    for (size_t i = 0; i < kName.size() && match; ++i) {
      match = std::tolower(static_cast<unsigned char>(line[i])) == kName[i];
    }
    if (!match) continue;
    std::string_view value = line.substr(kName.size());
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (!value.starts_with("Bearer ")) return std::nullopt;
    return value.substr(7);
  }
  return std::nullopt;
}

}  // namespace

HttpServer::HttpServer(asio::io_context& io, std::string host, uint16_t port,
                       HttpServerOptions options)
    : io_(io), host_(std::move(host)), port_(port), options_(std::move(options)), acceptor_(io) {}

Status HttpServer::Start() {
  asio::error_code ec;
  auto address = asio::ip::make_address(host_, ec);
  if (ec) return MakeError(Errc::kInvalidArgument, "admin listener host must be an IP: " + host_);
  asio::ip::tcp::endpoint endpoint(address, port_);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return MakeError(Errc::kIoError,
                     fmt::format("admin listener {}:{}: {}", host_, port_, ec.message()));
  bound_port_ = acceptor_.local_endpoint().port();
  asio::co_spawn(io_, AcceptLoop(), asio::detached);
  return Status::Ok();
}

void HttpServer::Stop() {
  asio::post(io_, [this] {
    asio::error_code ec;
    acceptor_.close(ec);
  });
}

asio::awaitable<void> HttpServer::AcceptLoop() {
  for (;;) {
    auto [ec, socket] = co_await acceptor_.async_accept(
        asio::make_strand(io_), asio::experimental::as_tuple(asio::use_awaitable));
    if (ec) {
      if (!acceptor_.is_open()) co_return;
      continue;
    }
    auto executor = socket.get_executor();
    asio::co_spawn(executor, Session(std::move(socket)), asio::detached);
  }
}

HttpResponse HttpServer::Dispatch(const std::string& method, const std::string& target,
                                  AdminRole role) {
  if (method != "GET" && method != "POST") {
    return {405, "text/plain", "only GET and POST are supported\n"};
  }
  // The console page itself holds no data (a browser cannot send a token
  // while navigating); the API calls it makes carry the token.
  const bool page = method == "GET" && (target == "/" || target.rfind("/console", 0) == 0);
  if (role == AdminRole::kNone && !page) {
    return {401, "text/plain", "authentication required: a bearer token or client certificate\n"};
  }
  if (method == "POST" && role != AdminRole::kAdmin) {
    return {403, "text/plain", "this action needs the admin role\n"};
  }
  size_t q = target.find('?');
  std::string path = target.substr(0, q);
  std::string query = q == std::string::npos ? "" : target.substr(q + 1);
  const auto& routes = method == "GET" ? routes_ : post_routes_;
  auto it = routes.find(path);
  if (it == routes.end()) {
    const auto& other = method == "GET" ? post_routes_ : routes_;
    if (other.count(path) > 0)
      return {405, "text/plain", method + " not allowed on " + path + "\n"};
    return {404, "text/plain", "not found: " + path + "\n"};
  }
  return it->second(query);
}

asio::awaitable<void> HttpServer::Session(asio::ip::tcp::socket socket) {
  if (options_.tls == nullptr) {
    co_await Serve(socket, std::nullopt);
    co_return;
  }
  asio::ssl::stream<asio::ip::tcp::socket> tls(std::move(socket), *options_.tls);
  auto [handshake] = co_await tls.async_handshake(
      asio::ssl::stream_base::server, asio::experimental::as_tuple(asio::use_awaitable));
  if (handshake) {
    Log()->info("admin API: TLS handshake failed: {}", handshake.message());
    co_return;
  }
  std::optional<security::KafkaPrincipal> certificate;
  if (X509* cert = SSL_get1_peer_certificate(tls.native_handle()); cert != nullptr) {
    if (options_.tls_principal) {
      auto principal = options_.tls_principal(cert);
      if (principal.ok()) certificate = std::move(principal).value();
    }
    X509_free(cert);
  }
  co_await Serve(tls, certificate);
}

template <typename Stream>
asio::awaitable<void> HttpServer::Serve(
    Stream& stream, const std::optional<security::KafkaPrincipal>& certificate) {
  std::string buffer;
  auto [ec, n] = co_await asio::async_read_until(
      stream, asio::dynamic_buffer(buffer, kMaxRequestHeader), "\r\n\r\n",
      asio::experimental::as_tuple(asio::use_awaitable));
  HttpResponse response;
  if (ec) {
    response = {400, "text/plain", "bad request\n"};
  } else {
    std::string line = buffer.substr(0, buffer.find("\r\n"));
    size_t a = line.find(' '), b = line.rfind(' ');
    if (a == std::string::npos || b <= a) {
      response = {400, "text/plain", "bad request line\n"};
    } else {
      const std::string_view head(buffer.data(), n);
      const AdminRole role = options_.access.RoleOf(BearerToken(head), certificate);
      response = Dispatch(line.substr(0, a), line.substr(a + 1, b - a - 1), role);
    }
  }
  std::string out = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}Connection: "
      "close\r\n\r\n",
      response.status, Reason(response.status), response.content_type, response.body.size(),
      response.status == 401 ? "WWW-Authenticate: Bearer realm=\"strata\"\r\n" : "");
  out += response.body;
  co_await asio::async_write(stream, asio::buffer(out),
                             asio::experimental::as_tuple(asio::use_awaitable));
  asio::error_code ignored;
  if constexpr (std::is_same_v<Stream, asio::ip::tcp::socket>) {
    stream.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  } else {
    co_await stream.async_shutdown(asio::experimental::as_tuple(asio::use_awaitable));
  }
}

}  // namespace strata::admin
