#pragma once
// AsyncResult<T>: hands a value produced on any thread to a coroutine waiting
// on its own executor (the connection's strand). The producer stores the
// value and posts a timer cancel to that executor; the waiter sleeps on the
// timer until then. Checking `done_` before sleeping and delivering the wake
// through the waiter's own strand means a value set before, during or after
// the wait is never missed (the AppendNotifier pattern).
//
// Thread-safety: Set may be called from any thread, once; Wait only from the
// executor given to the constructor.
#include <asio.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <atomic>
#include <memory>
#include <optional>

namespace strata::coordinator {

template <class T>
class AsyncResult : public std::enable_shared_from_this<AsyncResult<T>> {
 public:
  explicit AsyncResult(asio::any_io_executor executor)
      : timer_(executor, asio::steady_timer::time_point::max()) {}

  void Set(T value) {
    value_ = std::move(value);
    done_.store(true, std::memory_order_release);
    asio::post(timer_.get_executor(), [self = this->shared_from_this()] { self->timer_.cancel(); });
  }

  asio::awaitable<T> Wait() {
    while (!done_.load(std::memory_order_acquire)) {
      co_await timer_.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
    }
    co_return std::move(*value_);
  }

 private:
  asio::steady_timer timer_;
  std::optional<T> value_;
  std::atomic<bool> done_{false};
};

}  // namespace strata::coordinator
