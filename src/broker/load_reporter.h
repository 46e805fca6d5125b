#pragma once
// LoadReporter: this broker's side of the autobalancer's load metrics.
// Every strata.balancer.metrics.interval.ms it turns the traffic counters
// of its replicas (Partition::traffic) into rates over the interval, adds
// local log sizes and broker totals (CPU, record bytes in and out, the log
// directory's file system), and produces the sample to `__strata_metrics`
// (key: its node id) with a real Produce request, acks=all, to the
// partition's leader (node id modulo the partitions): the same path any
// producer takes, so any consumer can read it (docs/balancer.md has the
// format). A failed publish is logged at most once a minute and the
// sample dropped; the next one carries on.
//
// Thread-safety: one thread of its own; the produce runs on the broker's
// control io_context.
#include <asio/any_io_executor.hpp>
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "balancer/metrics_sample.h"
#include "base/metrics.h"
#include "cluster/metadata_view.h"
#include "net/client.h"

namespace strata::broker {

class TopicManager;
struct BrokerContext;

// Creates `__strata_metrics` if missing (on the active controller):
// strata.balancer.metrics.topic.partitions partitions, up to 3 replicas,
// delete policy with strata.balancer.metrics.retention.ms.
Status EnsureMetricsTopic(BrokerContext& ctx);

struct LoadReporterOptions {
  cluster::NodeId node{-1};
  std::chrono::milliseconds interval{10'000};
  std::string log_dir;
  int64_t declared_disk_bytes = 0;  // 0: the file system's size
};

class LoadReporter {
 public:
  LoadReporter(TopicManager& topics, cluster::MetadataView& view, asio::any_io_executor io,
               LoadReporterOptions options);
  ~LoadReporter();  // stops the thread

  // One sample now, over the time since the previous one (for tests).
  balancer::MetricsSample TakeSample();
  int64_t published() const { return published_->value(); }

 private:
  struct Counters {
    int64_t bytes_in = 0, messages_in = 0, bytes_out = 0, replication_in = 0, replication_out = 0;
  };
  void Run();
  Status Publish(const balancer::MetricsSample& sample);
  net::Client* ClientFor(cluster::NodeId leader);
  balancer::BrokerTotals Totals(double seconds, const balancer::MetricsSample& sample);

  TopicManager& topics_;
  cluster::MetadataView& view_;
  asio::any_io_executor io_;
  const LoadReporterOptions options_;
  std::map<std::string, Counters> last_;  // by "topic-partition"
  int64_t last_ms_ = 0;                   // steady clock
  double last_cpu_s_ = 0;
  std::map<cluster::NodeId, std::unique_ptr<net::Client>> clients_;
  int64_t last_warning_ms_ = 0;
  metrics::Counter* published_;
  metrics::Counter* failures_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace strata::broker
