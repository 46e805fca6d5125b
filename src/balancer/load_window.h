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
// Thread-safety: none; callers serialize every call (the balancer holds its
// mutex), Load() included: it is const but rebuilds the loads lazily.
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
  void Clear();

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
  // One partition's figures in one sample, compact: a window holds a
  // sample per broker and interval for every replica it reports (millions
  // at scale), so keys are interned and rates kept as floats.
  struct Rates {
    uint32_t key = 0;  // index into keys_
    float bytes_in = 0, bytes_out = 0, messages_in = 0;
    int64_t size = 0;
  };
  struct Sample {
    int64_t timestamp_ms = 0;
    int64_t window_ms = 0;
    BrokerTotals totals;
    std::vector<Rates> partitions;
  };
  struct BrokerSamples {
    std::deque<Sample> complete;  // oldest first
    Sample pending;               // parts of the newest sample so far
    int32_t pending_parts = 0;
  };
  uint32_t Intern(const std::string& topic, int32_t partition);
  void Complete(BrokerSamples& b);
  // Recomputes loads_ from every broker's samples: once per read after
  // samples came in, not per sample (a thousand brokers complete a hundred
  // samples a second).
  void Rebuild() const;

  const int samples_;
  std::map<NodeId, BrokerSamples> brokers_;
  std::map<Key, uint32_t> key_index_;
  std::vector<Key> keys_;
  // What Load() answers, by key index; rebuilt lazily.
  mutable std::vector<PartitionLoad> loads_;
  mutable std::vector<bool> reported_;
  mutable bool dirty_ = false;
};

}  // namespace strata::balancer
