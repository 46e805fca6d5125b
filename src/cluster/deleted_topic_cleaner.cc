#include "cluster/deleted_topic_cleaner.h"

#include <utility>

#include "base/log.h"
#include "cluster/log.h"

namespace strata::cluster {

DeletedTopicCleaner::DeletedTopicCleaner(Metadata& metadata, ControllerElection& election,
                                         RemoteDataDeleter delete_remote_data,
                                         std::chrono::milliseconds retry_interval)
    : metadata_(metadata),
      election_(election),
      delete_remote_data_(std::move(delete_remote_data)),
      retry_interval_(retry_interval) {
  const std::string deleted = metadata.keys().DeletedTopicsPrefix();
  const std::string controller = metadata.keys().Controller();
  subscription_ = metadata.view().Subscribe(
      [this, deleted, controller](const std::vector<std::string>& keys, bool reloaded) {
        bool relevant = reloaded;
        for (const auto& k : keys) relevant = relevant || k.starts_with(deleted) || k == controller;
        if (!relevant) return;
        std::lock_guard lock(mu_);
        dirty_ = true;
        wake_.notify_one();
      });
  thread_ = std::thread([this] { Run(); });
}

DeletedTopicCleaner::~DeletedTopicCleaner() {
  metadata_.view().Unsubscribe(subscription_);
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    wake_.notify_one();
  }
  thread_.join();
}

void DeletedTopicCleaner::Run() {
  auto next_retry = std::chrono::steady_clock::time_point::max();
  bool pending = false;  // a change seen, not yet acted on (we may not be the controller)
  for (;;) {
    {
      std::unique_lock lock(mu_);
      // The election can become ours without a view change reaching us
      // first (a fenced session renewed): look every second.
      auto until = std::min(next_retry, std::chrono::steady_clock::now() + std::chrono::seconds(1));
      wake_.wait_until(lock, until, [this] { return dirty_ || stopping_; });
      if (stopping_) return;
      // Taken at once, so a broker that is not the controller sleeps until
      // the next change or second instead of waking again and again.
      pending = pending || dirty_;
      dirty_ = false;
      bool due = pending || std::chrono::steady_clock::now() >= next_retry;
      if (!due || !election_.active()) continue;
      pending = false;
    }
    next_retry = CleanOnce() ? std::chrono::steady_clock::time_point::max()
                             : std::chrono::steady_clock::now() + retry_interval_;
  }
}

bool DeletedTopicCleaner::CleanOnce() {
  bool all_done = true;
  for (const Metadata::DeletedTopic& deleted : metadata_.DeletedTopics()) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return false;
    }
    if (!election_.active()) return false;
    const TopicRecord& topic = deleted.topic;
    if (delete_remote_data_) {
      Status st = delete_remote_data_(topic);
      if (!st.ok()) {
        ControllerLog()->warn("deleting the remote data of deleted topic '{}' ({}): {}; retrying",
                              topic.name, UuidToBase64(topic.id), st.error().message);
        all_done = false;
        continue;
      }
    }
    Status forgot = metadata_.ForgetDeletedTopic(deleted);
    if (!forgot.ok()) {
      all_done = false;
      continue;
    }
    cleaned_++;
    ControllerLog()->info("deleted the remote data of deleted topic '{}' ({}, {} partitions)",
                          topic.name, UuidToBase64(topic.id), topic.partitions);
  }
  return all_done;
}

}  // namespace strata::cluster
