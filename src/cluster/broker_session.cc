#include "cluster/broker_session.h"

#include <fmt/format.h>

#include "base/log.h"
#include "cluster/logger.h"

namespace strata::cluster {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

int64_t SessionNowMs() {
  return std::chrono::duration_cast<milliseconds>(Clock::now().time_since_epoch()).count();
}

std::string Describe(const BrokerRegistration& b) {
  std::string out;
  for (const auto& l : b.listeners)
    out += (out.empty() ? "" : ",") + fmt::format("{}:{}", l.host, l.port);
  return out;
}

}  // namespace

BrokerSession::BrokerSession(Metadata& metadata, BrokerSessionOptions options)
    : metadata_(metadata),
      options_(std::move(options)),
      key_(metadata.keys().Broker(options_.registration.node_id)),
      new_log_dir_epoch_(options_.registration.new_log_dir_epoch) {}

Result<std::unique_ptr<BrokerSession>> BrokerSession::Start(Metadata& metadata,
                                                            BrokerSessionOptions options) {
  std::unique_ptr<BrokerSession> s(new BrokerSession(metadata, std::move(options)));
  // A crashed predecessor's registration lasts at most one TTL (+ slack for
  // an etcd leader change, which extends leases by an election timeout).
  STRATA_RETURN_IF_ERROR(s->Register(s->options_.ttl + milliseconds(2000)));
  s->thread_ = std::thread([p = s.get()] { p->Run(); });
  return s;
}

BrokerSession::~BrokerSession() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (LeaseId lease = lease_.load()) {
    RecordCleanLeave();
    Status st = metadata_.kv().RevokeLease(lease);
    if (!st.ok())
      Log()->warn("revoking broker lease: {} (it expires by itself)", st.error().message);
  }
}

void BrokerSession::RecordCleanLeave() {
  // Only while the registration is still ours: a successor with the same
  // node id that registered meanwhile must not be marked as gone.
  // As registered (not in its controlled-shutdown state: a standby stays
  // one), with the log directory's news as it stands.
  BrokerRegistration known = options_.registration;
  known.new_log_dir_epoch = new_log_dir_epoch_.load();
  known.left_cleanly = true;
  KvCompare ours = KvCompare::CreatedAt(key_, epoch_.load());
  KvOp put =
      KvOp::Put(metadata_.keys().KnownBroker(options_.registration.node_id), EncodeBroker(known));
  auto r = metadata_.kv().Txn(std::span(&ours, 1), std::span(&put, 1));
  if (!r.ok()) {
    Log()->warn("recording a clean leave: {} (the balancer will treat this broker as vanished)",
                r.error().message);
  }
}

BrokerRegistration BrokerSession::Registration() const {
  BrokerRegistration r = options_.registration;
  if (shutting_down_.load()) r.state = BrokerState::kShuttingDown;
  r.new_log_dir_epoch = new_log_dir_epoch_.load();
  return r;
}

Status BrokerSession::EnterControlledShutdown() {
  shutting_down_ = true;
  const LeaseId lease = lease_.load();
  if (lease == 0) return MakeError(Errc::kUnavailable, "not registered (lease lost)");
  // Only our own registration: the key made at our epoch.
  KvCompare ours = KvCompare::CreatedAt(key_, epoch_.load());
  KvOp put = KvOp::Put(key_, EncodeBroker(Registration()), lease);
  STRATA_ASSIGN_OR_RETURN(TxnResult r, metadata_.kv().Txn(std::span(&ours, 1), std::span(&put, 1)));
  if (!r.succeeded) return MakeError(Errc::kUnavailable, "the registration changed meanwhile");
  metadata_.view().WaitForRevision(r.revision, options_.ttl);
  return Status::Ok();
}

void BrokerSession::OnChange(std::function<void(bool, BrokerEpoch)> listener) {
  std::lock_guard lock(mu_);
  listener_ = std::move(listener);
}

Status BrokerSession::RegisterOnce() {
  KvStore& kv = metadata_.kv();
  STRATA_ASSIGN_OR_RETURN(LeaseId lease, kv.GrantLease(options_.ttl));
  KvCompare absent = KvCompare::Absent(key_);
  const std::string record = EncodeBroker(Registration());
  KvOp puts[] = {KvOp::Put(key_, record, lease),
                 KvOp::Put(metadata_.keys().KnownBroker(options_.registration.node_id), record)};
  auto r = kv.Txn(std::span(&absent, 1), std::span(puts));
  if (!r.ok() || !r->succeeded) {
    (void)kv.RevokeLease(lease);
    if (!r.ok()) return r.take_error();
    return MakeError(Errc::kAlreadyExists, "registered");
  }
  lease_ = lease;
  renewed_at_ms_ = SessionNowMs();
  epoch_ = r->revision;  // the key's create revision
  metadata_.view().WaitForRevision(r->revision, options_.ttl);
  return Status::Ok();
}

Status BrokerSession::Register(milliseconds wait_for_predecessor) {
  const NodeId node = options_.registration.node_id;
  auto deadline = Clock::now() + wait_for_predecessor;
  bool told = false;
  while (true) {
    Status st = RegisterOnce();
    if (st.ok()) {
      Log()->info("node {} registered with broker epoch {} (lease TTL {} ms)", node, epoch_.load(),
                  options_.ttl.count());
      return st;
    }
    if (st.error().code != Errc::kAlreadyExists) return st;
    auto other = metadata_.kv().Get(key_);
    std::string who = "?";
    if (other.ok() && !other->kvs.empty()) {
      auto b = DecodeBroker(other->kvs[0].value);
      if (b.ok()) who = Describe(*b);
    }
    if (Clock::now() >= deadline) {
      return MakeError(Errc::kAlreadyExists,
                       fmt::format("node.id {} is already registered by a live broker ({}); "
                                   "each broker needs its own node.id",
                                   node, who));
    }
    if (!told) {
      Log()->warn("node {} is still registered ({}); waiting for that registration to expire", node,
                  who);
      told = true;
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
}

void BrokerSession::SetFenced(bool fenced, const std::string& why) {
  const bool lost = lease_lost();
  const bool was_fenced = fenced_.exchange(fenced);
  const bool was_lost = told_lost_.exchange(lost);
  if (was_fenced == fenced && was_lost == lost) return;
  if (fenced && lost) {
    Log()->error("node {} is fenced: {}; it acts as no leader or controller until registered again",
                 options_.registration.node_id, why);
  } else if (fenced) {
    Log()->error(
        "node {} is fenced: {}; it acts as no controller and makes no metadata changes, and leads "
        "what it led until the store answers",
        options_.registration.node_id, why);
  } else {
    Log()->info("node {} unfenced: {} (broker epoch {})", options_.registration.node_id, why,
                epoch_.load());
  }
  std::function<void(bool, BrokerEpoch)> listener;
  {
    std::lock_guard lock(mu_);
    listener = listener_;
  }
  if (listener) listener(fenced, BrokerEpoch(epoch_.load()));
}

void BrokerSession::Run() {
  const milliseconds period = options_.ttl / 3;
  auto last_renewed = Clock::now();
  while (true) {
    {
      std::unique_lock lock(mu_);
      if (wake_.wait_for(lock, period, [this] { return stopping_; })) return;
    }
    if (fenced_.load() && lease_.load() == 0) {
      // Lease gone: a new registration, with a higher epoch.
      Status st = RegisterOnce();
      if (st.ok()) {
        last_renewed = Clock::now();
        renewed_at_ms_ = SessionNowMs();
        SetFenced(false, "registered again");
      }
      continue;
    }
    auto renewed = metadata_.kv().KeepAliveOnce(lease_.load());
    if (renewed.ok()) {
      renewals_++;
      last_renewed = Clock::now();
      renewed_at_ms_ = SessionNowMs();
      ProbeRevision();
      if (fenced_.load()) SetFenced(false, "the lease outlived the outage");
      continue;
    }
    if (renewed.error().code == Errc::kNotFound) {
      lease_ = 0;
      SetFenced(true, "its lease expired");
      continue;
    }
    if (Clock::now() - last_renewed >= options_.ttl) {
      SetFenced(true, "no lease renewal for " + std::to_string(options_.ttl.count()) + " ms (" +
                          renewed.error().message + ")");
    }
  }
}

int64_t BrokerSession::lease_age_ms() const {
  return std::max<int64_t>(0, SessionNowMs() - renewed_at_ms_.load());
}

void BrokerSession::ProbeRevision() {
  auto r = metadata_.kv().Get(key_);
  if (!r.ok()) return;
  // The view applies changes in revision order: once it reaches this
  // revision, it has seen everything the store had at the probe.
  const Revision seen = metadata_.view().revision();
  if (seen >= r->revision) {
    probed_revision_ = 0;
    return;
  }
  // Still behind an earlier probe: the lag keeps counting from that one.
  const Revision earlier = probed_revision_.load();
  if (earlier != 0 && seen < earlier) return;
  probed_at_ms_ = SessionNowMs();
  probed_revision_ = r->revision;
}

int64_t BrokerSession::watch_lag_ms() const {
  const int64_t rev = probed_revision_.load();
  if (rev == 0 || metadata_.view().revision() >= rev) return 0;
  return std::max<int64_t>(0, SessionNowMs() - probed_at_ms_.load());
}

}  // namespace strata::cluster
