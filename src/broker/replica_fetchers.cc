#include "broker/replica_fetchers.h"

#include <fmt/format.h>

#include "broker/logger.h"

namespace strata::broker {

ReplicaFetchers::ReplicaFetchers(const config::BrokerConfig& config, cluster::MetadataView& view,
                                 cluster::NodeId self,
                                 std::shared_ptr<replication::ReplicationThrottle> throttle,
                                 std::function<void(cluster::NodeId)> on_leader_unreachable)
    : self_(self), view_(view), on_leader_unreachable_(std::move(on_leader_unreachable)) {
  options_.replica_id = self;
  options_.max_wait_ms = static_cast<int32_t>(config.GetLong("replica.fetch.wait.max.ms"));
  options_.min_bytes = static_cast<int32_t>(config.GetLong("replica.fetch.min.bytes"));
  options_.max_bytes = static_cast<int32_t>(config.GetLong("replica.fetch.response.max.bytes"));
  options_.partition_max_bytes = static_cast<int32_t>(config.GetLong("replica.fetch.max.bytes"));
  options_.backoff = std::chrono::milliseconds(config.GetLong("replica.fetch.backoff.ms"));
  options_.timeout = std::chrono::milliseconds(config.GetLong("replica.socket.timeout.ms"));
  options_.sync_from_active_segment = config.GetBool("strata.replica.sync.enable");
  options_.throttle = std::move(throttle);
  fetchers_per_source_ = static_cast<size_t>(config.GetLong("num.replica.fetchers"));
}

ReplicaFetchers::~ReplicaFetchers() { Shutdown(); }

void ReplicaFetchers::SetSecurity(net::ClientSecurity security) {
  std::lock_guard lock(mu_);
  options_.security = std::move(security);
}

void ReplicaFetchers::Shutdown() {
  std::map<cluster::NodeId, Source> sources;
  {
    std::lock_guard lock(mu_);
    sources.swap(sources_);
    assigned_.clear();
  }
  sources.clear();  // joins the loops, outside the lock
}

void ReplicaFetchers::Sync(const std::shared_ptr<Partition>& partition, bool tiered,
                           std::function<bool()> throttled) {
  const TopicPartition& tp = partition->tp();
  cluster::PartitionRecord state = partition->state();
  std::lock_guard lock(mu_);
  if (state.leader == self_ || state.leader == cluster::kNoNode) {
    StopLocked(tp);
    return;
  }
  auto it = assigned_.find(tp);
  if (it != assigned_.end() && it->second.leader == state.leader &&
      it->second.leader_epoch == state.leader_epoch) {
    return;  // already following this leadership
  }
  StopLocked(tp);
  size_t index = TopicPartitionHash{}(tp) % fetchers_per_source_;
  replication::ReplicaFetcher* fetcher = FetcherLocked(state.leader, index);
  if (fetcher == nullptr) return;  // the leader's registration is not known yet
  fetcher->Add({.topic = tp.topic,
                .partition = tp.partition,
                .leader_epoch = state.leader_epoch,
                .replica = partition,
                .tiered = tiered,
                .throttled = std::move(throttled)});
  assigned_[tp] = {state.leader, state.leader_epoch, index};
  Log()->info("{}: following leader {} at epoch {} from offset {}", tp.ToString(),
              state.leader.value(), state.leader_epoch.value(), partition->log()->log_end_offset());
}

void ReplicaFetchers::Stop(const TopicPartition& tp) {
  std::lock_guard lock(mu_);
  StopLocked(tp);
}

void ReplicaFetchers::StopLocked(const TopicPartition& tp) {
  auto it = assigned_.find(tp);
  if (it == assigned_.end()) return;
  auto source = sources_.find(it->second.leader);
  if (source != sources_.end() && it->second.fetcher < source->second.fetchers.size()) {
    if (auto& f = source->second.fetchers[it->second.fetcher]) f->Remove(tp.topic, tp.partition);
  }
  assigned_.erase(it);
}

replication::ReplicaFetcher* ReplicaFetchers::FetcherLocked(cluster::NodeId leader, size_t index) {
  auto registration = view_.Broker(leader);
  const cluster::BrokerListener* endpoint =
      registration ? cluster::InterBrokerEndpoint(registration->registration) : nullptr;
  if (endpoint == nullptr) return nullptr;
  const cluster::BrokerListener& l = *endpoint;
  Source& source = sources_[leader];
  if (source.host != l.host || source.port != l.port) {
    // A new endpoint (the leader restarted elsewhere): new loops. Partitions
    // assigned to the old ones are re-added by their next Sync.
    source.fetchers.clear();
    source.host = l.host;
    source.port = static_cast<uint16_t>(l.port);
    for (auto it = assigned_.begin(); it != assigned_.end();) {
      it = it->second.leader == leader ? assigned_.erase(it) : std::next(it);
    }
  }
  source.fetchers.resize(fetchers_per_source_);
  auto& fetcher = source.fetchers[index];
  if (!fetcher) {
    replication::FetcherOptions options = options_;
    if (on_leader_unreachable_) {
      options.on_unreachable = [notify = on_leader_unreachable_, leader] { notify(leader); };
    }
    fetcher = std::make_unique<replication::ReplicaFetcher>(
        fmt::format("replica-fetcher-{}-{}", leader.value(), index), source.host, source.port,
        std::move(options));
  }
  return fetcher.get();
}

size_t ReplicaFetchers::followed() const {
  std::lock_guard lock(mu_);
  return assigned_.size();
}

int64_t ReplicaFetchers::bytes_fetched() const {
  std::lock_guard lock(mu_);
  int64_t total = 0;
  for (const auto& [id, source] : sources_) {
    for (const auto& f : source.fetchers) total += f ? f->bytes_fetched() : 0;
  }
  return total;
}

}  // namespace strata::broker
