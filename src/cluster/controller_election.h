#pragma once
// ControllerElection: one active controller per cluster, chosen through the
// store. A broker campaigns by creating the controller key with its session's
// lease (create-if-absent); the winner's election revision is that key's
// create revision. Every write the controller makes is guarded by Fence()
// (the key still exists with that create revision), so a controller that has
// lost its lease, or been replaced, can write nothing, even if it has not yet
// noticed. When the key goes (the controller's lease expired or it shut
// down) the others campaign again.
//
// Thread-safety: all methods are safe from any thread; the listener runs on
// the election's thread.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "cluster/broker_session.h"
#include "cluster/metadata.h"

namespace strata::cluster {

class ControllerElection {
 public:
  using Listener = std::function<void(bool active, Revision election_revision)>;
  static std::unique_ptr<ControllerElection> Start(Metadata& metadata, BrokerSession& session,
                                                   Listener listener);
  // Resigns (deletes the key if it is ours) so another broker takes over now.
  ~ControllerElection();

  bool active() const { return active_.load(); }
  Revision election_revision() const { return election_revision_.load(); }
  // The guard of every controller write.
  KvCompare Fence() const;

 private:
  ControllerElection(Metadata& metadata, BrokerSession& session, Listener listener);
  void Run();
  void Campaign();
  void SetActive(bool active, Revision rev);

  Metadata& metadata_;
  BrokerSession& session_;
  Listener listener_;
  const std::string key_;
  std::atomic<bool> active_{false};
  std::atomic<Revision> election_revision_{0};
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool changed_ = false;  // the view changed the controller key
  int subscription_ = 0;
  std::thread thread_;
};

}  // namespace strata::cluster
