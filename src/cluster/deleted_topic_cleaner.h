#pragma once
// DeletedTopicCleaner: deletes the remote data of deleted tiered topics,
// once, on the active controller. A topic's deletion leaves a DeletedTopic
// record (Metadata::DeleteTopic); while this broker's election is active,
// the cleaner hands each record to `delete_remote_data` and drops the record
// when that succeeds, retrying failures (remote store down) every
// `retry_interval`. The leaders of a topic delete their partitions' data too
// as they let them go; this covers the partitions whose leader was down and
// the brokers that die halfway.
//
// Thread-safety: one thread of its own, so a slow remote store holds up
// nothing else; constructed and destroyed by the broker.
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "cluster/controller_election.h"
#include "cluster/metadata.h"
#include "cluster/view_change_signal.h"

namespace strata::cluster {

class DeletedTopicCleaner {
 public:
  // Deletes every partition's remote data of `topic`; idempotent. Empty when
  // this broker has no remote store: records are then dropped as they come.
  using RemoteDataDeleter = std::function<Status(const TopicRecord& topic)>;

  DeletedTopicCleaner(Metadata& metadata, ControllerElection& election,
                      RemoteDataDeleter delete_remote_data,
                      std::chrono::milliseconds retry_interval = std::chrono::seconds(10));
  ~DeletedTopicCleaner();

  // Topics deleted so far by this broker (for tests and metrics).
  int64_t cleaned() const { return cleaned_.load(); }

 private:
  void Run();
  // One pass over the records; true when none is left to retry.
  bool CleanOnce();

  Metadata& metadata_;
  ControllerElection& election_;
  RemoteDataDeleter delete_remote_data_;
  std::chrono::milliseconds retry_interval_;
  std::atomic<int64_t> cleaned_{0};
  ViewChangeSignal signal_;  // deleted-topic records and the controller key
  std::thread thread_;
};

}  // namespace strata::cluster
