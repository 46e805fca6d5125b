#include "cluster/controller_election.h"

#include "base/log.h"
#include "cluster/logger.h"

namespace strata::cluster {

namespace {
constexpr std::chrono::milliseconds kRecheck{500};
}  // namespace

ControllerElection::ControllerElection(Metadata& metadata, BrokerSession& session,
                                       Listener listener)
    : metadata_(metadata),
      session_(session),
      listener_(std::move(listener)),
      key_(metadata.keys().Controller()) {}

std::unique_ptr<ControllerElection> ControllerElection::Start(Metadata& metadata,
                                                              BrokerSession& session,
                                                              Listener listener) {
  std::unique_ptr<ControllerElection> e(
      new ControllerElection(metadata, session, std::move(listener)));
  ControllerElection* raw = e.get();
  e->subscription_ =
      metadata.view().Subscribe([raw](const std::vector<std::string>& keys, bool reloaded) {
        bool ours = reloaded;
        for (const auto& k : keys) ours = ours || k == raw->key_;
        if (!ours) return;
        std::lock_guard lock(raw->mu_);
        raw->changed_ = true;
        raw->wake_.notify_all();
      });
  e->thread_ = std::thread([raw] { raw->Run(); });
  return e;
}

ControllerElection::~ControllerElection() {
  metadata_.view().Unsubscribe(subscription_);
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (active_.load()) {
    KvCompare fence = Fence();
    KvOp resign = KvOp::Delete(key_);
    auto r = metadata_.kv().Txn(std::span(&fence, 1), std::span(&resign, 1));
    if (!r.ok())
      ControllerLog()->warn("resigning as controller: {} (the key goes with the lease)",
                            r.error().message);
    SetActive(false, 0);
  }
}

KvCompare ControllerElection::Fence() const {
  return KvCompare::CreatedAt(key_, election_revision_.load());
}

void ControllerElection::SetActive(bool active, Revision rev) {
  bool was = active_.exchange(active);
  election_revision_ = active ? rev : 0;
  if (was == active) return;
  if (active) {
    ControllerLog()->info("node {} is the active controller (election revision {})",
                          session_.node(), rev);
  } else {
    ControllerLog()->warn("node {} is no longer the controller", session_.node());
  }
  if (listener_) listener_(active, rev);
}

void ControllerElection::Campaign() {
  LeaseId lease = session_.lease();
  if (session_.fenced() || lease == 0) {
    SetActive(false, 0);  // a fenced broker is no controller
    return;
  }
  auto current = metadata_.view().Controller();
  if (current) {
    bool ours = current->node == session_.node() && current->lease == lease;
    if (ours) {
      SetActive(true, current->election_revision);
    } else {
      SetActive(false, 0);
    }
    return;
  }
  SetActive(false, 0);
  KvCompare absent = KvCompare::Absent(key_);
  KvOp put = KvOp::Put(key_, std::to_string(session_.node().value()), lease);
  auto r = metadata_.kv().Txn(std::span(&absent, 1), std::span(&put, 1));
  if (!r.ok()) {
    ControllerLog()->debug("campaign failed: {}", r.error().message);
    return;
  }
  if (r->succeeded) {
    metadata_.view().WaitForRevision(r->revision, std::chrono::milliseconds(5000));
    SetActive(true, r->revision);
  }
}

void ControllerElection::Run() {
  while (true) {
    Campaign();
    std::unique_lock lock(mu_);
    // Woken by a change of the controller key; re-checked periodically for
    // the session's fencing and lease changes.
    wake_.wait_for(lock, kRecheck, [this] { return stopping_ || changed_; });
    if (stopping_) return;
    changed_ = false;
  }
}

}  // namespace strata::cluster
