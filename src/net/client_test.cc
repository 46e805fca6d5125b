#include "net/client.h"

#include <gtest/gtest.h>

#include <asio.hpp>
#include <atomic>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "net/server.h"
#include "protocol/header.h"

namespace strata::net {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

// Metadata v1: a classic (non-flexible) request and response header.
constexpr int16_t kKey = 3;
constexpr int16_t kVersion = 1;

// Answers each request with its body, after the response header; a body of
// "hang" is answered after 5 s, "lie" with a wrong correlation id.
class EchoHandler : public RequestHandler {
 public:
  bool IsFlexibleRequest(int16_t, int16_t) const override { return false; }
  asio::awaitable<Result<std::optional<Bytes>>> Handle(Request& request) override {
    ++requests;
    {
      std::lock_guard lock(mu);
      peers.insert(request.peer);
    }
    std::string body(request.body.begin(), request.body.end());
    int32_t correlation_id = request.header.correlation_id;
    if (body == "hang") {
      asio::steady_timer timer(co_await asio::this_coro::executor, 5s);
      co_await timer.async_wait(asio::use_awaitable);
    }
    if (body == "lie") ++correlation_id;
    Bytes out;
    protocol::WriteResponseHeader(out, correlation_id, false);
    out.insert(out.end(), request.body.begin(), request.body.end());
    co_return std::optional<Bytes>(std::move(out));
  }
  std::atomic<int> requests{0};
  std::mutex mu;
  std::set<std::string> peers;  // one per connection a request came on
};

// A real Server on loopback, with its own threads.
class TestServer {
 public:
  explicit TestServer(uint16_t port = 0) : pool_(2) {
    ServerOptions options;
    options.port = port;
    server_ = std::make_unique<Server>(io_, pool_, options, handler);
    Status started = server_->Start();
    EXPECT_TRUE(started.ok()) << started.error().message;
    pool_.Start("test-net");
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TestServer() {
    server_->Stop();
    work_.reset();
    io_.stop();
    thread_.join();
    pool_.Stop();
    pool_.Join();
  }
  uint16_t port() const { return server_->bound_port(); }
  EchoHandler handler;

 private:
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      asio::make_work_guard(io_)};
  IoContextPool pool_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
};

// Client-side threads: `contexts` io_contexts, one thread each.
class ClientThreads {
 public:
  explicit ClientThreads(int contexts) : pool(contexts) { pool.Start("test-client"); }
  ~ClientThreads() {
    pool.Stop();
    pool.Join();
  }
  IoContextPool pool;
};

Bytes Text(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string Text(MutableByteView b) { return std::string(b.begin(), b.end()); }

// Runs one call on `io` and waits for its result.
Result<Response> CallOn(asio::io_context& io, Client& client, const std::string& body,
                        std::chrono::milliseconds timeout = 10s) {
  auto done = std::make_shared<std::promise<Result<Response>>>();
  auto result = done->get_future();
  asio::co_spawn(
      io,
      [&client, body, timeout, done]() -> asio::awaitable<void> {
        done->set_value(
            co_await client.Call(kKey, kVersion, Text(body), SteadyClock::now() + timeout));
      },
      asio::detached);
  return result.get();
}

TEST(Client, ManyConcurrentCallsShareAFewConnectionsAndGetTheirOwnResponses) {
  TestServer server;
  ClientThreads threads(2);
  ClientOptions options;
  options.max_connections = 2;
  Client client(threads.pool.Next().get_executor(), "127.0.0.1", server.port(), options);
  constexpr int kCallers = 4, kCalls = 50;
  std::atomic<int> matched{0};
  std::vector<std::future<void>> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.push_back(std::async(std::launch::async, [&, c] {
      asio::io_context& io = threads.pool.Next();
      for (int i = 0; i < kCalls; ++i) {
        std::string body = "caller " + std::to_string(c) + " call " + std::to_string(i);
        auto got = CallOn(io, client, body);
        ASSERT_TRUE(got.ok()) << got.error().message;
        EXPECT_EQ(Text(got->body()), body);
        if (Text(got->body()) == body) ++matched;
        EXPECT_LE(client.open_connections(), 2);
      }
    }));
  }
  for (auto& f : callers) f.get();
  EXPECT_EQ(matched.load(), kCallers * kCalls);
  EXPECT_EQ(server.handler.requests.load(), kCallers * kCalls);
}

TEST(Client, AnIdleConnectionIsReusedUntilItHasBeenIdleTooLong) {
  TestServer server;
  ClientThreads threads(1);
  asio::io_context& io = threads.pool.Next();
  ClientOptions reusing;
  Client client(io.get_executor(), "127.0.0.1", server.port(), reusing);
  ASSERT_TRUE(CallOn(io, client, "one").ok());
  ASSERT_TRUE(CallOn(io, client, "two").ok());
  EXPECT_EQ(server.handler.peers.size(), 1u);
  // Idle for at least max_idle (0) whenever reused: a new connection each time.
  ClientOptions retiring;
  retiring.max_idle = 0ms;
  Client eager(io.get_executor(), "127.0.0.1", server.port(), retiring);
  ASSERT_TRUE(CallOn(io, eager, "three").ok());
  ASSERT_TRUE(CallOn(io, eager, "four").ok());
  EXPECT_EQ(server.handler.peers.size(), 3u);
  EXPECT_EQ(eager.open_connections(), 1);
}

TEST(Client, AnUnreachableBrokerFailsFastThenBacksOffThenReconnects) {
  uint16_t port;
  { port = TestServer().port(); }  // a port nobody listens on now
  ClientThreads threads(1);
  ClientOptions options;
  options.reconnect_backoff = 300ms;
  options.reconnect_backoff_max = 300ms;
  Client client(threads.pool.Next().get_executor(), "127.0.0.1", port, options);
  auto first = CallOn(threads.pool.Next(), client, "x");
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().code, Errc::kUnavailable) << first.error().message;
  // Within the backoff: refused without a connection attempt.
  auto second = CallOn(threads.pool.Next(), client, "x");
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("reconnecting in"), std::string::npos)
      << second.error().message;

  TestServer server(port);
  const auto deadline = SteadyClock::now() + 10s;
  Result<Response> got = MakeError(Errc::kUnavailable, "not tried");
  while (SteadyClock::now() < deadline) {
    got = CallOn(threads.pool.Next(), client, "back");
    if (got.ok()) break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(got.ok()) << "still failing 10 s after the server came back: " << got.error().message;
  EXPECT_EQ(Text(got->body()), "back");
}

TEST(Client, ACallPastItsDeadlineTimesOutAndTheNextCallWorks) {
  TestServer server;
  ClientThreads threads(1);
  Client client(threads.pool.Next().get_executor(), "127.0.0.1", server.port());
  const auto start = SteadyClock::now();
  auto hung = CallOn(threads.pool.Next(), client, "hang", 200ms);
  const auto took = SteadyClock::now() - start;
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.error().code, Errc::kTimeout) << hung.error().message;
  EXPECT_LT(took, 3s);
  EXPECT_EQ(client.open_connections(), 0);  // the timed-out connection is closed
  auto next = CallOn(threads.pool.Next(), client, "after");
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(Text(next->body()), "after");
}

TEST(Client, AResponseWithAnotherCorrelationIdClosesTheConnection) {
  TestServer server;
  ClientThreads threads(1);
  Client client(threads.pool.Next().get_executor(), "127.0.0.1", server.port());
  auto lied = CallOn(threads.pool.Next(), client, "lie");
  ASSERT_FALSE(lied.ok());
  EXPECT_NE(lied.error().message.find("correlation id"), std::string::npos) << lied.error().message;
  EXPECT_EQ(client.open_connections(), 0);
  auto next = CallOn(threads.pool.Next(), client, "honest");
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(Text(next->body()), "honest");
}

TEST(Client, CloseFailsLaterCalls) {
  TestServer server;
  ClientThreads threads(1);
  Client client(threads.pool.Next().get_executor(), "127.0.0.1", server.port());
  ASSERT_TRUE(CallOn(threads.pool.Next(), client, "a").ok());
  client.Close();
  auto after = CallOn(threads.pool.Next(), client, "b");
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().code, Errc::kShuttingDown);
}

}  // namespace
}  // namespace strata::net
