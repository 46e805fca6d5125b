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
#include "balancer/service/produce_to_leader.h"
#include "base/metrics.h"
#include "cluster/metadata_view.h"

namespace strata::broker {
class TopicManager;
}
namespace strata::kafka {
struct BrokerContext;
}

namespace strata::balancer {

// Creates the balancer's internal topics if missing (on the active
// controller): `__strata_metrics` (strata.balancer.metrics.topic.partitions
// partitions, strata.balancer.metrics.retention.ms) and
// `__strata_balancer_log` (1 partition, strata.balancer.log.retention.ms);
// up to 3 replicas, delete policy.
Status EnsureBalancerTopics(kafka::BrokerContext& ctx);

struct LoadReporterOptions {
  cluster::NodeId node{-1};
  std::chrono::milliseconds interval{10'000};
  std::string log_dir;
  int64_t declared_disk_bytes = 0;  // 0: the file system's size
  net::ClientSecurity inter_broker_security;
};

class LoadReporter {
 public:
  LoadReporter(broker::TopicManager& topics, cluster::MetadataView& view, asio::any_io_executor io,
               LoadReporterOptions options);
  ~LoadReporter();  // stops the thread

  // A sample now, over the time since the last published one; Commit
  // makes it the new baseline (once it is published).
  balancer::MetricsSample TakeSample();
  void Commit();
  int64_t published() const { return published_->value(); }

 private:
  struct Counters {
    int64_t bytes_in = 0, messages_in = 0, bytes_out = 0, replication_in = 0, replication_out = 0;
  };
  void Run();
  Status Publish(const balancer::MetricsSample& sample);
  balancer::BrokerTotals Totals(double seconds, const balancer::MetricsSample& sample);

  broker::TopicManager& topics_;
  cluster::MetadataView& view_;
  PeerClients peers_;
  const LoadReporterOptions options_;
  std::map<std::string, Counters> last_;  // by "topic-partition", as last published
  int64_t last_ms_ = 0;                   // steady clock
  double last_cpu_s_ = 0;
  std::map<std::string, Counters> next_;  // the sample being published
  int64_t next_ms_ = 0;
  double next_cpu_s_ = 0;
  int64_t last_warning_ms_ = 0;
  metrics::Counter* published_;
  metrics::Counter* failures_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace strata::balancer
