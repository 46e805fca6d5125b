// AsyncResult: a value set before the wait, or later from another thread,
// reaches the coroutine waiting on its strand.
#include "coordinator/async_result.h"

#include <gtest/gtest.h>

#include <thread>

namespace strata::coordinator {
namespace {

TEST(AsyncResultTest, ValueSetBeforeWaitIsReturnedAtOnce) {
  asio::io_context io;
  auto strand = asio::make_strand(io);
  auto result = std::make_shared<AsyncResult<int>>(strand);
  result->Set(7);
  int got = 0;
  asio::co_spawn(
      strand, [&]() -> asio::awaitable<void> { got = co_await result->Wait(); }, asio::detached);
  io.run();
  EXPECT_EQ(got, 7);
}

TEST(AsyncResultTest, ValueSetFromAnotherThreadWakesTheWaiter) {
  for (int round = 0; round < 200; ++round) {
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    auto strand = asio::make_strand(io);
    auto result = std::make_shared<AsyncResult<std::string>>(strand);
    std::string got;
    asio::co_spawn(
        strand,
        [&]() -> asio::awaitable<void> {
          got = co_await result->Wait();
          work.reset();
        },
        asio::detached);
    std::thread runner([&] { io.run(); });
    // Races the coroutine reaching its wait, on purpose.
    std::thread setter([&] { result->Set("answer-" + std::to_string(round)); });
    setter.join();
    runner.join();
    ASSERT_EQ(got, "answer-" + std::to_string(round));
  }
}

}  // namespace
}  // namespace strata::coordinator
