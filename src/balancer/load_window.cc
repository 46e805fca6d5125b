#include "balancer/load_window.h"

#include <algorithm>

namespace strata::balancer {

void LoadWindow::Add(const MetricsSample& record) {
  BrokerSamples& b = brokers_[record.broker];
  if (!b.complete.empty() && record.timestamp_ms <= b.complete.back().timestamp_ms) return;
  if (b.pending_parts > 0 && record.timestamp_ms != b.pending.timestamp_ms) {
    b.pending = Sample{};  // a sample whose parts never all came: dropped
    b.pending_parts = 0;
  }
  if (b.pending_parts == 0) {
    b.pending.timestamp_ms = record.timestamp_ms;
    b.pending.window_ms = record.window_ms;
    b.pending.totals = record.totals;
  }
  for (const PartitionSample& p : record.partitions) {
    b.pending.partitions[{p.topic, p.partition}] = p;
  }
  if (++b.pending_parts >= record.parts) Complete(b);
}

void LoadWindow::Complete(BrokerSamples& b) {
  b.complete.push_back(std::move(b.pending));
  while (static_cast<int>(b.complete.size()) > samples_) b.complete.pop_front();
  b.pending = Sample{};
  b.pending_parts = 0;
  Rebuild();
}

// Each broker's rates averaged over its samples (weighted by their
// windows), summed over brokers; sizes from each broker's latest sample.
void LoadWindow::Rebuild() {
  loads_.clear();
  for (const auto& [id, b] : brokers_) {
    double total_ms = 0;
    for (const Sample& s : b.complete) total_ms += static_cast<double>(s.window_ms);
    if (total_ms <= 0) continue;
    for (const Sample& s : b.complete) {
      const double weight = static_cast<double>(s.window_ms) / total_ms;
      for (const auto& [key, p] : s.partitions) {
        PartitionLoad& l = loads_[key];
        l.bytes_in += weight * p.bytes_in_per_sec;
        l.bytes_out += weight * p.bytes_out_per_sec;
        l.messages_in += weight * p.messages_in_per_sec;
      }
    }
    for (const auto& [key, p] : b.complete.back().partitions) {
      PartitionLoad& l = loads_[key];
      l.size = std::max(l.size, p.size_bytes);
    }
  }
}

int64_t LoadWindow::LastSampleMs(NodeId broker) const {
  auto it = brokers_.find(broker);
  if (it == brokers_.end() || it->second.complete.empty()) return 0;
  return it->second.complete.back().timestamp_ms;
}

std::optional<BrokerTotals> LoadWindow::Totals(NodeId broker) const {
  auto it = brokers_.find(broker);
  if (it == brokers_.end() || it->second.complete.empty()) return std::nullopt;
  return it->second.complete.back().totals;
}

std::optional<PartitionLoad> LoadWindow::Load(const std::string& topic, int32_t partition) const {
  auto it = loads_.find({topic, partition});
  if (it == loads_.end()) return std::nullopt;
  return it->second;
}

int64_t LoadWindow::sample_count() const {
  int64_t n = 0;
  for (const auto& [id, b] : brokers_) n += static_cast<int64_t>(b.complete.size());
  return n;
}

}  // namespace strata::balancer
