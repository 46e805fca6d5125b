#pragma once
// HttpServer: the minimal HTTP/1.1 server behind the admin API and the
// Prometheus /metrics endpoint. GET, and POST for actions (its body is not
// read: parameters go in the query), one request per connection
// (Connection: close), routes registered by exact path and method. It runs on the
// broker's io_context; handlers must be quick and thread-safe. Optionally
// over TLS (HTTPS, with or without client certificates), and guarded by
// AdminAccess: GET needs the read role, POST the admin role (401 without
// credentials, 403 with too few).
#include <asio.hpp>
#include <asio/ssl.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "admin/admin_access.h"
#include "base/result.h"

namespace strata::admin {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; version=0.0.4";
  std::string body;
};

struct HttpServerOptions {
  std::shared_ptr<asio::ssl::context> tls;  // null: plain HTTP
  // A client certificate's principal (ssl.principal.mapping.rules).
  std::function<Result<security::KafkaPrincipal>(X509*)> tls_principal;
  AdminAccess access;  // default: open
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const std::string& query)>;

  HttpServer(asio::io_context& io, std::string host, uint16_t port, HttpServerOptions options = {});
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Register before Start().
  void Route(const std::string& path, Handler handler) { routes_[path] = std::move(handler); }
  void RoutePost(const std::string& path, Handler handler) {
    post_routes_[path] = std::move(handler);
  }
  Status Start();
  void Stop();
  uint16_t bound_port() const { return bound_port_; }

 private:
  asio::awaitable<void> AcceptLoop();
  asio::awaitable<void> Session(asio::ip::tcp::socket socket);
  template <typename Stream>
  asio::awaitable<void> Serve(Stream& stream,
                              const std::optional<security::KafkaPrincipal>& certificate);
  HttpResponse Dispatch(const std::string& method, const std::string& target, AdminRole role);

  asio::io_context& io_;
  std::string host_;
  uint16_t port_;
  uint16_t bound_port_ = 0;
  HttpServerOptions options_;
  asio::ip::tcp::acceptor acceptor_;
  std::map<std::string, Handler> routes_;
  std::map<std::string, Handler> post_routes_;
};

}  // namespace strata::admin
