#include "net/listener_probe.h"

#include <gtest/gtest.h>

#include <asio.hpp>

namespace strata::net {
namespace {

using namespace std::chrono_literals;

// A port that was just free: bound, then closed without listening.
uint16_t FreePort() {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

TEST(ListenerProbe, ASocketThatListensIsAccepting) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  EXPECT_EQ(ProbeListener("127.0.0.1", acceptor.local_endpoint().port(), 500ms),
            ListenerState::kAccepting);
  // Also by name.
  EXPECT_EQ(ProbeListener("localhost", acceptor.local_endpoint().port(), 500ms),
            ListenerState::kAccepting);
}

TEST(ListenerProbe, APortNobodyListensOnIsRefused) {
  uint16_t port = FreePort();
  EXPECT_EQ(ProbeListener("127.0.0.1", port, 500ms), ListenerState::kRefused);
}

TEST(ListenerProbe, ABacklogThatDoesNotAnswerIsNotARefusal) {
  // A listener whose accept queue is full drops further SYNs (Linux's
  // default): the probe must wait it out and say "no answer", never
  // "refused". Fill a backlog of one with connections nobody accepts.
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io);
  asio::ip::tcp::endpoint at(asio::ip::make_address("127.0.0.1"), 0);
  acceptor.open(at.protocol());
  acceptor.bind(at);
  acceptor.listen(0);
  uint16_t port = acceptor.local_endpoint().port();
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> held;
  ListenerState state = ListenerState::kAccepting;
  for (int i = 0; i < 16 && state == ListenerState::kAccepting; ++i) {
    auto s = std::make_unique<asio::ip::tcp::socket>(io);
    s->open(asio::ip::tcp::v4());
    s->non_blocking(true);
    asio::error_code ec;
    s->connect({asio::ip::make_address("127.0.0.1"), port}, ec);
    held.push_back(std::move(s));
    state = ProbeListener("127.0.0.1", port, 200ms);
  }
  EXPECT_EQ(state, ListenerState::kNoAnswer);
}

TEST(ListenerProbe, AnUnresolvableNameIsNoAnswer) {
  EXPECT_EQ(ProbeListener("no-such-host.invalid", 9092, 200ms), ListenerState::kNoAnswer);
}

}  // namespace
}  // namespace strata::net
