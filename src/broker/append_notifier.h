#pragma once
// AppendNotifier: wakes fetch requests that are long-polling (max_wait_ms) as
// soon as data is appended to a partition they read. A waiter registers the
// partitions it reads, re-checks them, then sleeps on a timer that a
// producer's Notify cancels; the register-then-check order means an append
// racing with the fetch cannot be missed.
//
// Thread-safety: Notify may be called from any thread; each waiter's timer is
// only touched on its own executor (cancel is posted there).
#include <asio.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "broker/topic_partition.h"

namespace strata::broker {

class AppendNotifier {
 public:
  class Waiter;

  // Registers interest; keep the returned handle alive while waiting.
  std::shared_ptr<Waiter> Register(asio::any_io_executor executor,
                                   const std::vector<TopicPartition>& partitions);
  // Sleeps until Notify on one of the partitions or the timeout. Returns true
  // when woken by an append.
  asio::awaitable<bool> Wait(std::shared_ptr<Waiter> waiter, std::chrono::milliseconds timeout);
  void Unregister(const std::shared_ptr<Waiter>& waiter);

  void Notify(const TopicPartition& tp);

 private:
  std::mutex mu_;
  std::unordered_map<TopicPartition, std::vector<std::weak_ptr<Waiter>>, TopicPartitionHash>
      waiters_;
};

class AppendNotifier::Waiter {
 public:
  explicit Waiter(asio::any_io_executor ex) : timer(ex) {}
  asio::steady_timer timer;
  std::vector<TopicPartition> partitions;
  std::atomic<bool> notified{false};
};

}  // namespace strata::broker
