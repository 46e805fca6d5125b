#include "admin/http_server.h"

#include <fmt/format.h>

#include <asio/experimental/as_tuple.hpp>

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
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    default:
      return "Error";
  }
}
}  // namespace

HttpServer::HttpServer(asio::io_context& io, std::string host, uint16_t port)
    : io_(io), host_(std::move(host)), port_(port), acceptor_(io) {}

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
    asio::co_spawn(executor, Serve(std::move(socket)), asio::detached);
  }
}

HttpResponse HttpServer::Dispatch(const std::string& method, const std::string& target) {
  if (method != "GET" && method != "POST") {
    return {405, "text/plain", "only GET and POST are supported\n"};
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

asio::awaitable<void> HttpServer::Serve(asio::ip::tcp::socket socket) {
  std::string buffer;
  auto [ec, n] = co_await asio::async_read_until(
      socket, asio::dynamic_buffer(buffer, kMaxRequestHeader), "\r\n\r\n",
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
      response = Dispatch(line.substr(0, a), line.substr(a + 1, b - a - 1));
    }
  }
  std::string out = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
      response.status, Reason(response.status), response.content_type, response.body.size());
  out += response.body;
  co_await asio::async_write(socket, asio::buffer(out),
                             asio::experimental::as_tuple(asio::use_awaitable));
  asio::error_code ignored;
  socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
}

}  // namespace strata::admin
