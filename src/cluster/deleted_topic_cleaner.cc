#include "cluster/deleted_topic_cleaner.h"

#include <utility>

#include "base/log.h"
#include "cluster/logger.h"

namespace strata::cluster {

DeletedTopicCleaner::DeletedTopicCleaner(Metadata& metadata, ControllerElection& election,
                                         RemoteDataDeleter delete_remote_data,
                                         std::chrono::milliseconds retry_interval)
    : metadata_(metadata),
      election_(election),
      delete_remote_data_(std::move(delete_remote_data)),
      retry_interval_(retry_interval),
      signal_(metadata.view(),
              {metadata.keys().DeletedTopicsPrefix(), metadata.keys().Controller()}) {
  thread_ = std::thread([this] { Run(); });
}

DeletedTopicCleaner::~DeletedTopicCleaner() {
  signal_.Stop();
  thread_.join();
}

void DeletedTopicCleaner::Run() {
  using Clock = ViewChangeSignal::Clock;
  auto next_retry = Clock::time_point::max();
  bool pending = false;  // a change seen, not yet acted on (we may not be the controller)
  for (;;) {
    // The election can become ours without a view change reaching us first
    // (a fenced session renewed): look every second.
    auto woken = signal_.WaitUntil(std::min(next_retry, Clock::now() + std::chrono::seconds(1)));
    if (woken.stopping) return;
    // A change is taken at once, so a broker that is not the controller
    // sleeps until the next change or second instead of waking again and
    // again.
    pending = pending || woken.changed;
    bool due = pending || Clock::now() >= next_retry;
    if (!due || !election_.active()) continue;
    pending = false;
    next_retry = CleanOnce() ? Clock::time_point::max() : Clock::now() + retry_interval_;
  }
}

bool DeletedTopicCleaner::CleanOnce() {
  bool all_done = true;
  for (const Metadata::DeletedTopic& deleted : metadata_.DeletedTopics()) {
    if (signal_.stopping() || !election_.active()) return false;
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
