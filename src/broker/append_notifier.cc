#include "broker/append_notifier.h"

#include <asio/experimental/as_tuple.hpp>

namespace strata::broker {

std::shared_ptr<AppendNotifier::Waiter> AppendNotifier::Register(
    asio::any_io_executor executor, const std::vector<TopicPartition>& partitions) {
  auto waiter = std::make_shared<Waiter>(executor);
  waiter->partitions = partitions;
  std::lock_guard lock(mu_);
  for (const auto& tp : partitions) waiters_[tp].push_back(waiter);
  return waiter;
}

void AppendNotifier::Unregister(const std::shared_ptr<Waiter>& waiter) {
  std::lock_guard lock(mu_);
  for (const auto& tp : waiter->partitions) {
    auto it = waiters_.find(tp);
    if (it == waiters_.end()) continue;
    auto& list = it->second;
    std::erase_if(list, [&](const std::weak_ptr<Waiter>& w) {
      auto p = w.lock();
      return !p || p == waiter;
    });
    if (list.empty()) waiters_.erase(it);
  }
}

asio::awaitable<bool> AppendNotifier::Wait(std::shared_ptr<Waiter> waiter,
                                           std::chrono::milliseconds timeout) {
  if (waiter->notified.load()) co_return true;
  waiter->timer.expires_after(timeout);
  co_await waiter->timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  co_return waiter->notified.load();
}

void AppendNotifier::Notify(const TopicPartition& tp) {
  std::vector<std::shared_ptr<Waiter>> wake;
  {
    std::lock_guard lock(mu_);
    auto it = waiters_.find(tp);
    if (it == waiters_.end()) return;
    for (auto& w : it->second) {
      if (auto p = w.lock()) wake.push_back(std::move(p));
    }
  }
  for (auto& w : wake) {
    if (w->notified.exchange(true)) continue;
    asio::post(w->timer.get_executor(), [w] { w->timer.cancel(); });
  }
}

}  // namespace strata::broker
