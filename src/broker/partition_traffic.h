#pragma once
// PartitionTraffic: what one replica carried so far, counted twice: per
// replica (cumulative from this process's start; the balancer's load
// samples are their differences over an interval) and per topic in the
// Prometheus counters strata_topic_*_total, which every replica of the
// topic on this broker adds to.
//
// Thread-safety: every method is lock-free and safe from any thread.
#include <atomic>
#include <cstdint>
#include <string>

#include "base/metrics.h"

namespace strata::broker {

class PartitionTraffic {
 public:
  explicit PartitionTraffic(const std::string& topic);

  // A produce batch of `records` records appended (leader).
  void Produced(int64_t bytes, int64_t records);
  // Record bytes read by consumers from here.
  void Consumed(int64_t bytes);
  // Appended from the leader (follower).
  void ReplicatedIn(int64_t bytes);
  // Read by followers from here (leader).
  void ReplicatedOut(int64_t bytes);

  int64_t bytes_in() const { return bytes_in_.load(std::memory_order_relaxed); }
  int64_t messages_in() const { return messages_in_.load(std::memory_order_relaxed); }
  int64_t bytes_out() const { return bytes_out_.load(std::memory_order_relaxed); }
  int64_t replication_bytes_in() const {
    return replication_bytes_in_.load(std::memory_order_relaxed);
  }
  int64_t replication_bytes_out() const {
    return replication_bytes_out_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<int64_t> bytes_in_{0};
  std::atomic<int64_t> messages_in_{0};
  std::atomic<int64_t> bytes_out_{0};
  std::atomic<int64_t> replication_bytes_in_{0};
  std::atomic<int64_t> replication_bytes_out_{0};
  // The topic's counters; owned by the process-wide registry.
  metrics::Counter& topic_bytes_in_;
  metrics::Counter& topic_messages_in_;
  metrics::Counter& topic_bytes_out_;
  metrics::Counter& topic_replication_bytes_in_;
  metrics::Counter& topic_replication_bytes_out_;
};

}  // namespace strata::broker
