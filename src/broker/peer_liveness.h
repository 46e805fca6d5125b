#pragma once
// PeerLiveness: notices that another broker's process is gone, faster than
// its lease can expire. When a follower's fetch from a leader fails, the
// fetcher reports the leader here (Suspect). If that broker's listener then
// refuses connections twice, `confirm_after` apart, nothing serves there:
// its registration's lease is revoked at once, so the controller moves its
// leaderships (and its controllership) within milliseconds instead of after
// strata.etcd.lease.ttl.ms. A broker that does not answer at all (network
// partition, hung or overloaded host) is left to its lease: only a refusal
// is proof. Revoking is as safe as an expiry: a broker that finds its lease
// gone fences itself and registers again with a higher broker epoch.
//
// Thread-safety: Suspect from any thread (it never blocks); probes run on a
// thread of their own.
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cluster/metadata.h"

namespace strata::broker {

struct PeerLivenessOptions {
  bool enabled = true;                                 // strata.broker.liveness.probe.enable
  std::chrono::milliseconds connect_timeout{500};      // one connection attempt
  std::chrono::milliseconds confirm_after{200};        // between the two refusals
  std::chrono::milliseconds min_probe_interval{1000};  // per suspected broker
  // After revoking a broker's lease, leave that broker to its lease for this
  // long: where something other than a dead process answers with refusals
  // (a firewall's REJECT rule), a live broker is revoked at most this often.
  std::chrono::milliseconds revoke_backoff{10000};
};

class PeerLiveness {
 public:
  PeerLiveness(cluster::Metadata& metadata, cluster::NodeId self, PeerLivenessOptions options);
  ~PeerLiveness();  // stops the probe thread
  PeerLiveness(const PeerLiveness&) = delete;
  PeerLiveness& operator=(const PeerLiveness&) = delete;

  // `node` failed to answer this broker; probe it soon (at most once per
  // min_probe_interval).
  void Suspect(cluster::NodeId node);

 private:
  void Run();
  // Probes `node` and revokes its lease if it is registered, refuses
  // connections twice and is still the same registration afterwards.
  void Check(cluster::NodeId node);

  cluster::Metadata& metadata_;
  const cluster::NodeId self_;
  const PeerLivenessOptions options_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::set<cluster::NodeId> suspects_;
  std::map<cluster::NodeId, std::chrono::steady_clock::time_point> last_probe_;
  std::map<cluster::NodeId, std::chrono::steady_clock::time_point> last_revoked_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace strata::broker
