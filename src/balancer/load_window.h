#pragma once
// LoadWindow: the load samples of the last few intervals, as the active
// controller reads them from `__strata_metrics`, combined into what the
// ClusterModel needs: each partition's load and each broker's freshness.
//
// A partition's rates are summed over the brokers that report it, each
// broker's figure averaged over its samples in the window: only the leader
// reports produce bytes, and consumers may fetch from any replica
// (KIP-392), so the sum is the partition's whole traffic, and a leadership
// change within the window splits it without counting it twice. Its size
// is the largest a replica reports. A sample split into parts counts once
// all its parts are in.
//
// Thread-safety: none; the balancer's thread owns it.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "balancer/cluster_model.h"
#include "balancer/metrics_sample.h"

namespace strata::balancer {

class LoadWindow {
 public:
  // Keeps each broker's last `samples` complete samples.
  explicit LoadWindow(int samples = 6) : samples_(samples) {}

  // One record of `__strata_metrics` (a whole sample or one of its parts).
  void Add(const MetricsSample& record);
  // Forgets every sample (a new controller term reads the topic again).
  void Clear() { brokers_.clear(); }

  // The end time of the broker's last complete sample; 0: none.
  int64_t LastSampleMs(NodeId broker) const;
  // The broker's totals from its last complete sample.
  std::optional<BrokerTotals> Totals(NodeId broker) const;
  // A partition's load over the window; nullopt when no broker reports it.
  std::optional<PartitionLoad> Load(const std::string& topic, int32_t partition) const;
  // Complete samples held now (for status).
  int64_t sample_count() const;

 private:
  using Key = std::pair<std::string, int32_t>;
  struct Sample {
    int64_t timestamp_ms = 0;
    int64_t window_ms = 0;
    BrokerTotals totals;
    std::map<Key, PartitionSample> partitions;
  };
  struct BrokerSamples {
    std::deque<Sample> complete;  // oldest first
    Sample pending;               // parts of the newest sample so far
    int32_t pending_parts = 0;
  };
  void Complete(BrokerSamples& b);
  void Rebuild();

  const int samples_;
  std::map<NodeId, BrokerSamples> brokers_;
  // What Load() answers, rebuilt when a sample completes.
  std::map<Key, PartitionLoad> loads_;
};

}  // namespace strata::balancer
