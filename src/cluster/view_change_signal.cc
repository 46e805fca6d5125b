#include "cluster/view_change_signal.h"

#include <algorithm>
#include <utility>

namespace strata::cluster {

ViewChangeSignal::ViewChangeSignal(MetadataView& view, std::vector<std::string> prefixes)
    : view_(view) {
  subscription_ = view_.Subscribe(
      [this, prefixes = std::move(prefixes)](const std::vector<std::string>& keys, bool reloaded) {
        bool relevant = reloaded || std::any_of(keys.begin(), keys.end(), [&](const auto& k) {
                          return std::any_of(prefixes.begin(), prefixes.end(),
                                             [&](const auto& p) { return k.starts_with(p); });
                        });
        if (relevant) MarkChanged();
      });
}

ViewChangeSignal::~ViewChangeSignal() { view_.Unsubscribe(subscription_); }

ViewChangeSignal::Wake ViewChangeSignal::WaitUntil(Clock::time_point until) {
  std::unique_lock lock(mu_);
  wake_.wait_until(lock, until, [this] { return changed_ || stopping_; });
  return Wake{std::exchange(changed_, false), stopping_};
}

bool ViewChangeSignal::PauseUntil(Clock::time_point until) {
  std::unique_lock lock(mu_);
  wake_.wait_until(lock, until, [this] { return stopping_; });
  return stopping_;
}

void ViewChangeSignal::MarkChanged() {
  std::lock_guard lock(mu_);
  changed_ = true;
  wake_.notify_all();
}

void ViewChangeSignal::Stop() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  wake_.notify_all();
}

bool ViewChangeSignal::stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

}  // namespace strata::cluster
