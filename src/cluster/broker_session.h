#pragma once
// BrokerSession: this broker's registration in cluster metadata, bound to a
// lease it renews every TTL/3. The registration key's create revision is the
// broker epoch, so every registration has a higher one than the last.
//
// Fencing: when the lease may be gone (no renewal has succeeded for a whole
// TTL by our own clock, which is what etcd would conclude) the session is
// fenced: the broker stops acting as controller. When the lease is known to
// be gone (the store says so) it is lost as well: the broker then leads no
// partition either, until it registers again, which it does as soon as the
// store answers, with a new lease and a higher epoch. A renewal that succeeds
// after the local deadline proves the lease lived on, and simply unfences.
// (Out of contact but not known lost, a broker keeps leading what it led: no
// other replica can be made leader without a store write, and acks=all
// commits need the ISR, which changes only through the store.)
//
// A node id already registered by a live broker is refused: the session waits
// up to one TTL for that registration to expire (a crashed predecessor's
// does), then gives up with an error naming the other broker.
//
// Thread-safety: all methods are safe from any thread; listeners run on the
// session's thread.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "cluster/metadata.h"
#include "cluster/records.h"

namespace strata::cluster {

struct BrokerSessionOptions {
  BrokerRegistration registration;
  std::chrono::milliseconds ttl{10000};
};

class BrokerSession {
 public:
  static Result<std::unique_ptr<BrokerSession>> Start(Metadata& metadata,
                                                      BrokerSessionOptions options);
  // A clean shutdown: marks the known-broker record left_cleanly (the
  // balancer gives a broker expected back a longer grace), then revokes
  // the lease, so the registration goes at once.
  ~BrokerSession();

  BrokerEpoch epoch() const { return BrokerEpoch(epoch_.load()); }
  // The current lease (0 while fenced and not yet registered again); keys
  // that must go with this broker (the controller key) are written with it.
  LeaseId lease() const { return lease_.load(); }
  NodeId node() const { return options_.registration.node_id; }
  bool fenced() const { return fenced_.load(); }
  // The store said the lease is gone and no new registration exists yet.
  bool lease_lost() const { return lease_.load() == 0; }
  // Called with (fenced, epoch) on every change of fenced, lease_lost or epoch.
  void OnChange(std::function<void(bool fenced, BrokerEpoch epoch)> listener);
  // Controlled shutdown: rewrites the registration (same lease and epoch)
  // in state kShuttingDown, so the controller moves this broker's
  // leaderships and ISR memberships to others; a registration made again
  // after a lost lease keeps that state.
  Status EnterControlledShutdown();
  // What registrations made from now on say of the log directory
  // (BrokerRegistration::new_log_dir_epoch): the epoch it was new at, once
  // the first one is known, or -1 once the controller has acted on it.
  void SetNewLogDirEpoch(int64_t epoch) { new_log_dir_epoch_ = epoch; }
  // Renewals so far (for tests and metrics).
  int64_t renewals() const { return renewals_.load(); }
  // Milliseconds since the lease was last renewed (or granted).
  int64_t lease_age_ms() const;
  // How long the metadata view has been behind a revision the store was
  // seen at (read after each renewal): 0 while the watch keeps up.
  int64_t watch_lag_ms() const;

 private:
  BrokerSession(Metadata& metadata, BrokerSessionOptions options);
  // One registration attempt: kAlreadyExists while another broker's
  // registration of the node id is live.
  Status RegisterOnce();
  BrokerRegistration Registration() const;
  void RecordCleanLeave();
  Status Register(std::chrono::milliseconds wait_for_predecessor);
  void Run();
  void SetFenced(bool fenced, const std::string& why);
  // Notes the store's revision now (watch_lag_ms compares the view with it).
  void ProbeRevision();

  Metadata& metadata_;
  const BrokerSessionOptions options_;
  const std::string key_;
  std::atomic<LeaseId> lease_{0};
  std::atomic<int64_t> epoch_{0};
  std::atomic<bool> fenced_{false};
  std::atomic<bool> told_lost_{false};  // lease_lost() as the listener last heard it
  std::atomic<bool> shutting_down_{false};
  std::atomic<int64_t> new_log_dir_epoch_;  // BrokerRegistration::new_log_dir_epoch
  std::atomic<int64_t> renewals_{0};
  std::atomic<int64_t> renewed_at_ms_{0};  // steady clock
  std::atomic<int64_t> probed_revision_{0};
  std::atomic<int64_t> probed_at_ms_{0};  // steady clock
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::function<void(bool, BrokerEpoch)> listener_;
  std::thread thread_;
};

}  // namespace strata::cluster
