#include "balancer/load_window.h"

#include <algorithm>

namespace strata::balancer {

void LoadWindow::Clear() {
  brokers_.clear();
  key_index_.clear();
  keys_.clear();
  loads_.clear();
  reported_.clear();
  dirty_ = false;
}

uint32_t LoadWindow::Intern(const std::string& topic, int32_t partition) {
  auto [it, added] =
      key_index_.try_emplace(Key{topic, partition}, static_cast<uint32_t>(keys_.size()));
  if (added) keys_.push_back(it->first);
  return it->second;
}

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
    b.pending.partitions.push_back({Intern(p.topic, p.partition),
                                    static_cast<float>(p.bytes_in_per_sec),
                                    static_cast<float>(p.bytes_out_per_sec),
                                    static_cast<float>(p.messages_in_per_sec), p.size_bytes});
  }
  if (++b.pending_parts >= record.parts) Complete(b);
}

void LoadWindow::Complete(BrokerSamples& b) {
  b.pending.partitions.shrink_to_fit();
  b.complete.push_back(std::move(b.pending));
  while (static_cast<int>(b.complete.size()) > samples_) b.complete.pop_front();
  b.pending = Sample{};
  b.pending_parts = 0;
  dirty_ = true;
}

// Each broker's rates averaged over its samples (weighted by their
// windows), summed over brokers; sizes from each broker's latest sample.
void LoadWindow::Rebuild() const {
  loads_.assign(keys_.size(), PartitionLoad{});
  reported_.assign(keys_.size(), false);
  for (const auto& [id, b] : brokers_) {
    double total_ms = 0;
    for (const Sample& s : b.complete) total_ms += static_cast<double>(s.window_ms);
    if (total_ms <= 0) continue;
    for (const Sample& s : b.complete) {
      const double weight = static_cast<double>(s.window_ms) / total_ms;
      for (const Rates& r : s.partitions) {
        PartitionLoad& l = loads_[r.key];
        l.bytes_in += weight * r.bytes_in;
        l.bytes_out += weight * r.bytes_out;
        l.messages_in += weight * r.messages_in;
        reported_[r.key] = true;
      }
    }
    for (const Rates& r : b.complete.back().partitions) {
      loads_[r.key].size = std::max(loads_[r.key].size, r.size);
    }
  }
  dirty_ = false;
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
  auto it = key_index_.find({topic, partition});
  if (it == key_index_.end()) return std::nullopt;
  if (dirty_ || loads_.size() != keys_.size()) Rebuild();
  if (!reported_[it->second]) return std::nullopt;
  return loads_[it->second];
}

int64_t LoadWindow::sample_count() const {
  int64_t n = 0;
  for (const auto& [id, b] : brokers_) n += static_cast<int64_t>(b.complete.size());
  return n;
}

}  // namespace strata::balancer
