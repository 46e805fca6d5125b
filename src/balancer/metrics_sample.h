#pragma once
// MetricsSample: what one broker publishes to `__strata_metrics` every
// strata.balancer.metrics.interval.ms, and the active controller's
// balancer reads back into its ClusterModel. The record key is the broker
// id as text; the value is JSON (docs/balancer.md gives the format), so any
// Kafka consumer can read it. Rates are per second over the sample's
// window; sizes are bytes now. A broker with many partitions splits its
// sample into parts (part/parts) that each stay well under a record's size
// limit; a reader keeps the parts of one (broker, timestamp) together.
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "cluster/types.h"

namespace strata::balancer {

// One replica's traffic on the publishing broker over the window.
struct PartitionSample {
  std::string topic;
  int32_t partition = 0;
  bool leader = false;                       // this broker led it at the end of the window
  double bytes_in_per_sec = 0;               // produce bytes appended (leader)
  double bytes_out_per_sec = 0;              // fetched by consumers from here
  double replication_bytes_in_per_sec = 0;   // appended from its leader (follower)
  double replication_bytes_out_per_sec = 0;  // fetched from here by followers (leader)
  double messages_in_per_sec = 0;            // produced records appended (leader)
  int64_t size_bytes = 0;                    // local log size now
  bool operator==(const PartitionSample&) const = default;
};

// The broker as a whole over the same window.
struct BrokerTotals {
  double cpu_cores_used = 0;             // process CPU time / wall time
  // Record bytes this broker's replicas took in (produced to its leaders,
  // copied by its followers) and gave out (to consumers and followers): the
  // traffic placement moves, without protocol overhead.
  double network_in_bytes_per_sec = 0;
  double network_out_bytes_per_sec = 0;
  int64_t disk_used_bytes = 0;           // the log directory's file system, used
  int64_t disk_capacity_bytes = 0;       // its size (or strata.broker.capacity.disk.bytes)
  bool operator==(const BrokerTotals&) const = default;
};

struct MetricsSample {
  static constexpr int kVersion = 1;
  cluster::NodeId broker{-1};
  int64_t timestamp_ms = 0;  // end of the window (wall clock)
  int64_t window_ms = 0;
  int32_t part = 0;   // this record's index among its sample's parts
  int32_t parts = 1;  // how many records the sample has
  BrokerTotals totals;
  std::vector<PartitionSample> partitions;
  bool operator==(const MetricsSample&) const = default;
};

// The partitions one record holds at most (a part of ~600 bytes each stays
// under 1 MiB, Kafka's default max.message.bytes).
inline constexpr size_t kPartitionsPerRecord = 1000;
// The internal topic, and the record key of a broker's samples.
inline constexpr const char* kMetricsTopic = "__strata_metrics";
// Where the balancer records its plans and moves (docs/balancer.md).
inline constexpr const char* kBalancerLogTopic = "__strata_balancer_log";
std::string MetricsRecordKey(cluster::NodeId broker);

// Splits `sample` into records of at most kPartitionsPerRecord partitions
// (at least one record, totals in each) and encodes each as JSON.
std::vector<std::string> EncodeMetricsSample(const MetricsSample& sample);
// One record's value back; checks every field and names the wrong one.
Result<MetricsSample> DecodeMetricsSample(const std::string& value);

}  // namespace strata::balancer
