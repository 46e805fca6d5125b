#pragma once
// ReassignmentProgress: how far each replica that a reassignment adds has
// copied its partition from this broker, the partition's leader: the bytes
// to copy (the leader's local log from where the replica's log starts, so
// a replica started at the active segment has almost none), the bytes
// copied, the copy rate and the time left. The ISR thread updates it; the
// admin API shows it (/v1/reassignments) and the log every 10 s while a
// copy runs.
//
// Thread-safety: all methods are safe from any thread.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "broker/partition.h"

namespace strata::broker {

struct ReplicaCopyProgress {
  TopicPartition tp;
  cluster::NodeId replica{-1};
  std::vector<cluster::NodeId> target;  // the replicas the reassignment ends with
  Offset start_offset = kNoOffset;      // the replica's log start (kNoOffset: not fetched yet)
  Offset copied_offset = kNoOffset;     // its log end
  Offset leader_end_offset;
  int64_t bytes_total = 0;
  int64_t bytes_copied = 0;
  double bytes_per_second = 0;
  int64_t eta_seconds = -1;  // -1: unknown
  bool in_isr = false;
  bool contiguous = true;  // with remote storage
};

class ReassignmentProgress {
 public:
  // Takes the state of the partitions this broker leads.
  void Update(const std::vector<std::shared_ptr<Partition>>& led, int64_t now_ms);
  std::vector<ReplicaCopyProgress> Snapshot() const;

 private:
  struct Rate {
    int64_t ms = 0;
    int64_t bytes = 0;
    double per_second = 0;
  };
  ReplicaCopyProgress Measure(const Partition& p, const cluster::PartitionRecord& state,
                              cluster::NodeId replica, int64_t now_ms);

  mutable std::mutex mu_;
  std::vector<ReplicaCopyProgress> current_;
  std::map<std::string, Rate> rates_;  // by "<topic>-<partition>/<replica>"
  int64_t last_log_ms_ = 0;
};

}  // namespace strata::broker
