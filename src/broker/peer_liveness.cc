#include "broker/peer_liveness.h"

#include "base/metrics.h"
#include "broker/logger.h"
#include "net/listener_probe.h"

namespace strata::broker {

using SteadyClock = std::chrono::steady_clock;

namespace {

metrics::Counter& Revocations() {
  static metrics::Counter& c = metrics::Global().GetCounter(
      "strata_peer_lease_revocations_total",
      "leases of other brokers revoked by this one because their listener refused connections");
  return c;
}

}  // namespace

PeerLiveness::PeerLiveness(cluster::Metadata& metadata, cluster::NodeId self,
                           PeerLivenessOptions options)
    : metadata_(metadata), self_(self), options_(options) {
  if (options_.enabled) thread_ = std::thread([this] { Run(); });
}

PeerLiveness::~PeerLiveness() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeerLiveness::Suspect(cluster::NodeId node) {
  if (!options_.enabled || node == self_) return;
  {
    std::lock_guard lock(mu_);
    auto last = last_probe_.find(node);
    if (last != last_probe_.end() &&
        SteadyClock::now() - last->second < options_.min_probe_interval) {
      return;
    }
    auto revoked = last_revoked_.find(node);
    if (revoked != last_revoked_.end() &&
        SteadyClock::now() - revoked->second < options_.revoke_backoff) {
      return;
    }
    if (!suspects_.insert(node).second) return;
  }
  wake_.notify_all();
}

void PeerLiveness::Run() {
  while (true) {
    cluster::NodeId node{-1};
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !suspects_.empty(); });
      if (stopping_) return;
      node = *suspects_.begin();
      suspects_.erase(suspects_.begin());
      last_probe_[node] = SteadyClock::now();
    }
    Check(node);
  }
}

void PeerLiveness::Check(cluster::NodeId node) {
  auto entry = metadata_.view().Broker(node);
  if (!entry || entry->lease == 0) return;
  const cluster::BrokerListener* endpoint = cluster::InterBrokerEndpoint(entry->registration);
  if (endpoint == nullptr) return;
  const cluster::BrokerListener& at = *endpoint;
  auto probe = [&] {
    return net::ProbeListener(at.host, static_cast<uint16_t>(at.port), options_.connect_timeout);
  };
  if (probe() != net::ListenerState::kRefused) return;
  {
    // Twice, apart: a broker that registered a moment before it listens
    // (start-up) must not be taken for a dead one.
    std::unique_lock lock(mu_);
    if (wake_.wait_for(lock, options_.confirm_after, [this] { return stopping_; })) return;
  }
  if (probe() != net::ListenerState::kRefused) return;
  // Only the registration that was probed: a broker that restarted in the
  // meantime registered under a new lease.
  auto now = metadata_.view().Broker(node);
  if (!now || now->lease != entry->lease || now->epoch != entry->epoch) return;
  Status st = metadata_.kv().RevokeLease(entry->lease);
  if (!st.ok() && st.error().code != Errc::kNotFound) {
    Log()->warn("broker {} refuses connections at {}:{}, but revoking its lease failed: {}",
                node.value(), at.host, at.port, st.error().message);
    return;
  }
  Revocations().Add();
  {
    std::lock_guard lock(mu_);
    last_revoked_[node] = SteadyClock::now();
  }
  Log()->warn(
      "broker {} (broker epoch {}) refuses connections at {}:{}: its process is gone; lease "
      "revoked so its leaderships move now rather than after the lease TTL",
      node.value(), entry->epoch.value(), at.host, at.port);
}

}  // namespace strata::broker
