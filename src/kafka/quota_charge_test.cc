// Tests of where a request's time is charged (KIP-219): by the response
// encoder when the response has throttle_time_ms (the larger throttle wins),
// once per request, and not at all for time spent in Waited.
#include "kafka/quota_charge.h"

#include <gtest/gtest.h>

#include <asio.hpp>

#include "kafka/codec.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/sasl_handshake.h"

namespace strata::kafka {
namespace {

// Answers every charge with `throttle_ms` and counts the charges.
class FakeCharger : public net::RequestTimeCharger {
 public:
  explicit FakeCharger(int32_t throttle_ms) : throttle_ms_(throttle_ms) {}
  int32_t Charge(net::Request&) override {
    ++charges;
    return throttle_ms_;
  }
  int charges = 0;

 private:
  const int32_t throttle_ms_;
};

TEST(QuotaChargeTest, EncodingAResponseWithAThrottleFieldChargesTheRequestOnce) {
  FakeCharger charger(300);
  net::Request request;
  request.request_time_charger = &charger;
  protocol::MetadataResponse response;
  response.throttle_time_ms = 100;  // a byte-rate throttle, smaller
  (void)EncodeResponse(request, response);
  EXPECT_EQ(response.throttle_time_ms, 300);
  EXPECT_EQ(charger.charges, 1);
  // The dispatcher's charge after the handler finds it done.
  EXPECT_EQ(net::ChargeRequestTime(request), 0);
  EXPECT_EQ(charger.charges, 1);
}

TEST(QuotaChargeTest, TheLargerThrottleWins) {
  FakeCharger charger(50);
  net::Request request;
  request.request_time_charger = &charger;
  protocol::MetadataResponse response;
  response.throttle_time_ms = 700;
  (void)EncodeResponse(request, response);
  EXPECT_EQ(response.throttle_time_ms, 700);
}

TEST(QuotaChargeTest, AResponseWithoutAThrottleFieldLeavesTheChargeToTheDispatcher) {
  FakeCharger charger(300);
  net::Request request;
  request.request_time_charger = &charger;
  protocol::SaslHandshakeResponse response;
  (void)EncodeResponse(request, response);
  EXPECT_EQ(charger.charges, 0);
  EXPECT_EQ(net::ChargeRequestTime(request), 300);
  EXPECT_EQ(charger.charges, 1);
}

TEST(QuotaChargeTest, WaitedTimeIsCountedOnTheRequest) {
  asio::io_context io;
  net::Request request;
  int got = 0;
  auto sleep_then = [](std::chrono::milliseconds d) -> asio::awaitable<int> {
    asio::steady_timer timer(co_await asio::this_coro::executor, d);
    co_await timer.async_wait(asio::use_awaitable);
    co_return 42;
  };
  auto sleep = [](std::chrono::milliseconds d) -> asio::awaitable<void> {
    asio::steady_timer timer(co_await asio::this_coro::executor, d);
    co_await timer.async_wait(asio::use_awaitable);
  };
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        got = co_await Waited(request, sleep_then(std::chrono::milliseconds(20)));
        co_await Waited(request, sleep(std::chrono::milliseconds(20)));
      },
      asio::detached);
  io.run();
  EXPECT_EQ(got, 42);
  EXPECT_GE(request.waited, std::chrono::milliseconds(40));
}

}  // namespace
}  // namespace strata::kafka
