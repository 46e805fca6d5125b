#include "cluster/etcd_kv_store.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netdb.h>
#include <sys/socket.h>

#include <atomic>
#include <climits>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "base/log.h"
#include "cluster/etcd_quorum.h"
#include "cluster/logger.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace strata::cluster {

namespace {

namespace pb = etcdserverpb;
using std::chrono::milliseconds;

// Maps a failed call to Errc; every message names the call and the cluster.
Error FromGrpc(const grpc::Status& st, const std::string& call, const std::string& where) {
  std::string msg = "etcd " + call + " (" + where + "): " + st.error_message();
  switch (st.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::ABORTED:
      return MakeError(Errc::kUnavailable, msg);
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      // etcd's "mvcc: database space exceeded": the NOSPACE alarm is raised
      // and every write fails until an operator frees space and disarms it.
      if (st.error_message().find("space") != std::string::npos) {
        msg +=
            " (NOSPACE alarm: etcd's database reached its --quota-backend-bytes and refuses all "
            "writes; compact and defragment etcd or raise the quota, then `etcdctl alarm "
            "disarm`)";
      }
      return MakeError(Errc::kUnavailable, msg);
    case grpc::StatusCode::OUT_OF_RANGE:
      return MakeError(Errc::kOutOfRange, msg);
    case grpc::StatusCode::NOT_FOUND:
      return MakeError(Errc::kNotFound, msg);
    case grpc::StatusCode::INVALID_ARGUMENT:
      return MakeError(Errc::kInvalidArgument, msg);
    default:
      return MakeError(Errc::kIoError, msg);
  }
}

KeyValue FromPb(const mvccpb::KeyValue& kv) {
  return KeyValue{kv.key(),          kv.value(),   kv.create_revision(),
                  kv.mod_revision(), kv.version(), kv.lease()};
}

void ToPb(const KvCompare& c, pb::Compare* out) {
  out->set_key(c.key);
  switch (c.op) {
    case KvCompare::Op::kEqual:
      out->set_result(pb::Compare::EQUAL);
      break;
    case KvCompare::Op::kNotEqual:
      out->set_result(pb::Compare::NOT_EQUAL);
      break;
    case KvCompare::Op::kLess:
      out->set_result(pb::Compare::LESS);
      break;
    case KvCompare::Op::kGreater:
      out->set_result(pb::Compare::GREATER);
      break;
  }
  switch (c.target) {
    case KvCompare::Target::kModRevision:
      out->set_target(pb::Compare::MOD);
      out->set_mod_revision(c.number);
      break;
    case KvCompare::Target::kCreateRevision:
      out->set_target(pb::Compare::CREATE);
      out->set_create_revision(c.number);
      break;
    case KvCompare::Target::kVersion:
      out->set_target(pb::Compare::VERSION);
      out->set_version(c.number);
      break;
    case KvCompare::Target::kValue:
      out->set_target(pb::Compare::VALUE);
      out->set_value(c.value);
      break;
  }
}

void ToPb(const KvOp& op, pb::RequestOp* out) {
  switch (op.kind) {
    case KvOp::Kind::kPut: {
      auto* put = out->mutable_request_put();
      put->set_key(op.key);
      put->set_value(op.value);
      put->set_lease(op.lease);
      break;
    }
    case KvOp::Kind::kDelete:
      out->mutable_request_delete_range()->set_key(op.key);
      break;
    case KvOp::Kind::kDeletePrefix: {
      auto* del = out->mutable_request_delete_range();
      del->set_key(op.key);
      del->set_range_end(PrefixEnd(op.key));
      break;
    }
  }
}

// One resolved IPv4 address per endpoint, for gRPC's "ipv4:" target, which
// lets one channel balance over (and fail over across) the members.
Result<std::string> ChannelTarget(const std::vector<std::string>& endpoints) {
  std::string target = "ipv4:";
  for (size_t i = 0; i < endpoints.size(); ++i) {
    const std::string& ep = endpoints[i];
    auto colon = ep.rfind(':');
    std::string host = ep.substr(0, colon);
    std::string port = ep.substr(colon + 1);
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
    if (rc != 0 || res == nullptr) {
      return MakeError(Errc::kInvalidArgument,
                       "strata.etcd.endpoints: cannot resolve " + ep + ": " + gai_strerror(rc));
    }
    char ip[INET_ADDRSTRLEN];
    auto* sin = reinterpret_cast<sockaddr_in*>(res->ai_addr);
    ::inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof ip);
    ::freeaddrinfo(res);
    if (i > 0) target += ",";
    target += std::string(ip) + ":" + port;
  }
  return target;
}

// Streams one prefix's changes; see KvStore::Watch.
// One gRPC channel to the members with the stubs on it. Replaced as a whole
// when calls keep failing as unavailable: gRPC 1.51 was seen to keep a
// channel failing ("tcp handshaker shutdown") for tens of seconds after an
// etcd restart, while a new channel connected at once.
struct Connection {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::KV::Stub> kv;
  std::unique_ptr<pb::Lease::Stub> lease;
  std::chrono::steady_clock::time_point created;
};

// Reads a whole PEM file; kInvalidArgument naming `key` when it cannot.
Result<std::string> ReadPem(const std::string& path, const char* key) {
  std::ifstream in(path);
  if (!in) return MakeError(Errc::kInvalidArgument, std::string(key) + ": cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// TLS credentials from strata.etcd.tls.*, or plaintext ones.
Result<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentials(const EtcdOptions& options) {
  if (options.ca_file.empty()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  STRATA_ASSIGN_OR_RETURN(ssl.pem_root_certs,
                          ReadPem(options.ca_file, "strata.etcd.tls.ca.location"));
  if (!options.cert_file.empty()) {
    STRATA_ASSIGN_OR_RETURN(ssl.pem_cert_chain,
                            ReadPem(options.cert_file, "strata.etcd.tls.cert.location"));
    STRATA_ASSIGN_OR_RETURN(ssl.pem_private_key,
                            ReadPem(options.key_file, "strata.etcd.tls.key.location"));
  }
  return grpc::SslCredentials(ssl);
}

std::shared_ptr<Connection> Connect(const std::string& target,
                                    const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  grpc::ChannelArguments args;
  // pick_first: one member at a time, the next when it goes. (round_robin
  // kept failing calls for many seconds after a member was killed and
  // restarted, though the other two members were up.)
  args.SetLoadBalancingPolicyName("pick_first");
  args.SetMaxReceiveMessageSize(INT_MAX);
  // etcd answers pings more often than every 5 s, or pings without a call
  // in flight, with GOAWAY.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  // Connections of its own: no subchannel shared with another channel.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // Reconnect soon after a member goes, but give each attempt 2 s: gRPC
  // takes the minimum backoff as the connect timeout too.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 2000);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  auto c = std::make_shared<Connection>();
  c->channel = grpc::CreateCustomChannel(target, credentials, args);
  c->kv = pb::KV::NewStub(c->channel);
  c->lease = pb::Lease::NewStub(c->channel);
  c->created = std::chrono::steady_clock::now();
  return c;
}

class EtcdKvStore;
std::shared_ptr<Connection> CurrentConnection(EtcdKvStore* store);
void AuthorizeCall(EtcdKvStore* store, grpc::ClientContext& ctx);
void ConnectionUnavailable(EtcdKvStore* store, const std::shared_ptr<Connection>& used);
std::unique_ptr<pb::Watch::Stub> WatchStub(const std::shared_ptr<Connection>& c);

class EtcdWatch : public KvWatch {
 public:
  EtcdWatch(EtcdKvStore* store, std::string where, std::string prefix, Revision start,
            WatchCallback callback)
      : store_(store),
        where_(std::move(where)),
        prefix_(std::move(prefix)),
        next_(start),
        callback_(std::move(callback)) {
    thread_ = std::thread([this] { Run(); });
  }

  ~EtcdWatch() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      if (ctx_) ctx_->TryCancel();
    }
    wake_.notify_all();
    thread_.join();
  }

 private:
  void Run() {
    milliseconds backoff{100};
    while (true) {
      bool progressed = false;
      bool over = Stream(progressed);
      if (over) return;
      if (progressed) backoff = milliseconds{100};
      std::unique_lock lock(mu_);
      if (wake_.wait_for(lock, backoff, [this] { return stopping_; })) return;
      backoff = std::min(backoff * 2, milliseconds{1000});
    }
  }

  // One stream until it fails; true when the watch is over (stopped or
  // compacted). `progressed`: the stream delivered something.
  bool Stream(bool& progressed) {
    grpc::ClientContext ctx;
    // A member cut off from the quorum cancels the stream rather than go
    // quiet, so the watch moves to a member that has a leader.
    ctx.AddMetadata("hasleader", "true");
    AuthorizeCall(store_, ctx);
    {
      std::lock_guard lock(mu_);
      if (stopping_) return true;
      ctx_ = &ctx;
    }
    auto conn = CurrentConnection(store_);
    auto stub = WatchStub(conn);
    auto stream = stub->Watch(&ctx);
    pb::WatchRequest req;
    auto* create = req.mutable_create_request();
    create->set_key(prefix_);
    create->set_range_end(PrefixEnd(prefix_));
    create->set_start_revision(next_);
    create->set_progress_notify(true);
    bool over = false;
    if (stream->Write(req)) {
      pb::WatchResponse resp;
      while (stream->Read(&resp)) {
        if (resp.compact_revision() != 0) {
          WatchBatch batch;
          batch.compact_revision = resp.compact_revision();
          callback_(batch);
          over = true;
          break;
        }
        if (resp.canceled()) break;  // e.g. the member lost its leader
        EtcdLog()->debug("etcd watch of {}: {} events, created={} canceled={} header revision {}",
                         prefix_, resp.events_size(), resp.created(), resp.canceled(),
                         resp.header().revision());
        if (resp.created()) {
          if (broken_)
            EtcdLog()->info("etcd watch of {} ({}) resumed at revision {}", prefix_, where_, next_);
          broken_ = false;
          continue;
        }
        progressed = true;
        Deliver(resp);
      }
    }
    {
      std::lock_guard lock(mu_);
      ctx_ = nullptr;
      if (stopping_) over = true;
    }
    ctx.TryCancel();
    grpc::Status st = stream->Finish();
    if (!over) ConnectionUnavailable(store_, conn);
    if (!over && !broken_) {  // one line per outage, not per retry
      EtcdLog()->warn("etcd watch of {} ({}) broke at revision {}: {}; resuming", prefix_, where_,
                      next_, st.error_message());
      broken_ = true;
    }
    return over;
  }

  void Deliver(const pb::WatchResponse& resp) {
    WatchBatch batch;
    batch.revision = resp.header().revision();
    for (const mvccpb::Event& ev : resp.events()) {
      WatchEvent out;
      out.type =
          ev.type() == mvccpb::Event::DELETE ? WatchEvent::Type::kDelete : WatchEvent::Type::kPut;
      out.kv = FromPb(ev.kv());
      next_ = std::max(next_, out.kv.mod_revision + 1);
      batch.events.push_back(std::move(out));
    }
    // A progress notification (no events) says every change up to the
    // header's revision has been sent.
    if (batch.events.empty()) next_ = std::max(next_, batch.revision + 1);
    callback_(batch);
  }

  EtcdKvStore* store_;  // outlives its watches
  std::string where_;
  std::string prefix_;
  Revision next_;        // only the watch thread touches it
  bool broken_ = false;  // the last stream failed (watch thread only)
  WatchCallback callback_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  grpc::ClientContext* ctx_ = nullptr;  // the live stream's, under mu_
  std::thread thread_;
};

class EtcdKvStore : public KvStore {
 public:
  EtcdKvStore(const EtcdOptions& options, std::string target,
              std::shared_ptr<grpc::ChannelCredentials> credentials)
      : options_(options),
        where_(Join(options.endpoints)),
        target_(std::move(target)),
        credentials_(std::move(credentials)),
        conn_(Connect(target_, credentials_)) {}

  // etcd's authentication token for calls (empty without a user), fetched
  // with Authenticate when there is none yet.
  std::string Token() {
    if (options_.user.empty()) return "";
    {
      std::lock_guard lock(token_mu_);
      if (!token_.empty()) return token_;
    }
    pb::AuthenticateRequest req;
    req.set_name(options_.user);
    req.set_password(options_.password);
    pb::AuthenticateResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + options_.request_timeout);
    grpc::Status st = pb::Auth::NewStub(Current()->channel)->Authenticate(&ctx, req, &resp);
    if (!st.ok()) {
      MetadataLog()->warn("etcd authentication as {} ({}) failed: {}", options_.user, where_,
                          st.error_message());
      return "";
    }
    std::lock_guard lock(token_mu_);
    token_ = resp.token();
    return token_;
  }
  // Adds the token to a call.
  void Authorize(grpc::ClientContext& ctx) {
    if (const std::string token = Token(); !token.empty()) ctx.AddMetadata("token", token);
  }

  // The connection to use now (watches take it at every reconnect).
  std::shared_ptr<Connection> Current() {
    std::lock_guard lock(mu_);
    return conn_;
  }
  // After an unavailable answer on `used`: a fresh channel, at most once a second.
  void Unavailable(const std::shared_ptr<Connection>& used) {
    std::lock_guard lock(mu_);
    if (conn_ != used || std::chrono::steady_clock::now() - conn_->created < milliseconds(1000))
      return;
    conn_ = Connect(target_, credentials_);
  }
  // FromGrpc, noting an unavailable store on the way.
  Error Fail(const grpc::Status& st, const char* call, const std::shared_ptr<Connection>& used) {
    if (st.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
        st.error_message().find("invalid auth token") != std::string::npos) {
      // The token expired (etcd's --auth-token-ttl): the next call gets a
      // new one; this one is retried as etcd being briefly unavailable.
      std::lock_guard lock(token_mu_);
      token_.clear();
      return MakeError(Errc::kUnavailable,
                       "etcd " + std::string(call) + " (" + where_ + "): " + st.error_message());
    }
    Error e = FromGrpc(st, call, where_);
    if (e.code == Errc::kUnavailable) Unavailable(used);
    return e;
  }

  Result<RangeResult> Get(const std::string& key) override {
    pb::RangeRequest req;
    req.set_key(key);
    return DoRange(req);
  }

  Result<RangeResult> Range(const std::string& from, const std::string& end, Revision at,
                            int64_t limit) override {
    pb::RangeRequest req;
    req.set_key(from);
    req.set_range_end(end);
    req.set_revision(at);
    req.set_limit(limit);
    return DoRange(req);
  }

  Result<TxnResult> Txn(std::span<const KvCompare> compares, std::span<const KvOp> ops) override {
    pb::TxnRequest req;
    for (const KvCompare& c : compares) ToPb(c, req.add_compare());
    for (const KvOp& op : ops) ToPb(op, req.add_success());
    pb::TxnResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    auto conn = Current();
    grpc::Status st = conn->kv->Txn(&ctx, req, &resp);
    if (!st.ok()) return Fail(st, "txn", conn);
    return TxnResult{resp.succeeded(), resp.header().revision()};
  }

  Result<LeaseId> GrantLease(milliseconds ttl) override {
    pb::LeaseGrantRequest req;
    req.set_ttl(std::max<int64_t>(1, (ttl.count() + 999) / 1000));  // etcd counts seconds
    pb::LeaseGrantResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    auto conn = Current();
    grpc::Status st = conn->lease->LeaseGrant(&ctx, req, &resp);
    if (!st.ok()) return Fail(st, "lease grant", conn);
    if (!resp.error().empty())
      return MakeError(Errc::kIoError, "etcd lease grant: " + resp.error());
    return LeaseId{resp.id()};
  }

  Result<milliseconds> KeepAliveOnce(LeaseId lease) override {
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    auto conn = Current();
    auto stream = conn->lease->LeaseKeepAlive(&ctx);
    pb::LeaseKeepAliveRequest req;
    req.set_id(lease);
    pb::LeaseKeepAliveResponse resp;
    bool got = stream->Write(req) && stream->WritesDone() && stream->Read(&resp);
    ctx.TryCancel();
    grpc::Status st = stream->Finish();
    if (!got) {
      if (st.ok() || st.error_code() == grpc::StatusCode::CANCELLED) {
        Unavailable(conn);
        return MakeError(Errc::kUnavailable, "etcd lease keepalive (" + where_ + "): no answer");
      }
      return Fail(st, "lease keepalive", conn);
    }
    // A TTL <= 0 is how etcd says the lease is gone (not as an error).
    if (resp.ttl() <= 0) {
      return MakeError(Errc::kNotFound, "etcd lease " + std::to_string(lease) + " expired");
    }
    return milliseconds{resp.ttl() * 1000};
  }

  Status RevokeLease(LeaseId lease) override {
    pb::LeaseRevokeRequest req;
    req.set_id(lease);
    pb::LeaseRevokeResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    auto conn = Current();
    grpc::Status st = conn->lease->LeaseRevoke(&ctx, req, &resp);
    if (!st.ok()) return Fail(st, "lease revoke", conn);
    return Status::Ok();
  }

  Result<std::unique_ptr<KvWatch>> Watch(const std::string& prefix, Revision start,
                                         WatchCallback callback) override {
    if (start == 0) {
      // "From now" is fixed here, not when the stream reaches etcd: a write
      // made after this call returns is always seen.
      pb::RangeRequest req;
      req.set_key(prefix);
      req.set_count_only(true);
      STRATA_ASSIGN_OR_RETURN(RangeResult now, DoRange(req));
      start = now.revision + 1;
    }
    return std::unique_ptr<KvWatch>(
        std::make_unique<EtcdWatch>(this, where_, prefix, start, std::move(callback)));
  }

  Status Compact(Revision rev) override {
    pb::CompactionRequest req;
    req.set_revision(rev);
    req.set_physical(true);
    pb::CompactionResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    auto conn = Current();
    grpc::Status st = conn->kv->Compact(&ctx, req, &resp);
    if (!st.ok()) return Fail(st, "compact", conn);
    return Status::Ok();
  }

  std::string Describe() const override { return "etcd " + where_; }

  Result<QuorumStatus> DescribeQuorum() override {
    return DescribeEtcdQuorum(Current()->channel, options_.request_timeout, where_, credentials_,
                              Token());
  }

 private:
  static std::string Join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ",") + e;
    return s;
  }

  // Every unary call's deadline, and its token.
  void SetDeadline(grpc::ClientContext& ctx) {
    ctx.set_deadline(std::chrono::system_clock::now() + options_.request_timeout);
    Authorize(ctx);
  }

  Result<RangeResult> DoRange(const pb::RangeRequest& req) {
    pb::RangeResponse resp;
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    auto conn = Current();
    grpc::Status st = conn->kv->Range(&ctx, req, &resp);
    if (!st.ok()) return Fail(st, "range", conn);
    RangeResult out;
    out.revision = resp.header().revision();
    out.more = resp.more();
    out.kvs.reserve(resp.kvs_size());
    for (const mvccpb::KeyValue& kv : resp.kvs()) out.kvs.push_back(FromPb(kv));
    return out;
  }

  EtcdOptions options_;
  std::string where_;
  std::string target_;
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  std::mutex mu_;
  std::shared_ptr<Connection> conn_;  // under mu_
  std::mutex token_mu_;
  std::string token_;  // under token_mu_
};

std::shared_ptr<Connection> CurrentConnection(EtcdKvStore* store) { return store->Current(); }
void AuthorizeCall(EtcdKvStore* store, grpc::ClientContext& ctx) { store->Authorize(ctx); }
void ConnectionUnavailable(EtcdKvStore* store, const std::shared_ptr<Connection>& used) {
  store->Unavailable(used);
}
std::unique_ptr<pb::Watch::Stub> WatchStub(const std::shared_ptr<Connection>& c) {
  return pb::Watch::NewStub(c->channel);
}

}  // namespace

Result<std::vector<std::string>> ParseEtcdEndpoints(const std::string& list) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string ep = list.substr(pos, comma - pos);
    while (!ep.empty() && ep.front() == ' ') ep.erase(ep.begin());
    while (!ep.empty() && ep.back() == ' ') ep.pop_back();
    for (const char* scheme : {"http://", "https://"}) {
      if (ep.rfind(scheme, 0) == 0) ep = ep.substr(std::string(scheme).size());
    }
    if (!ep.empty()) {
      auto colon = ep.rfind(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == ep.size()) {
        return MakeError(Errc::kInvalidArgument,
                         "strata.etcd.endpoints: '" + ep + "' is not host:port");
      }
      out.push_back(ep);
    }
    pos = comma + 1;
  }
  if (out.empty()) return MakeError(Errc::kInvalidArgument, "strata.etcd.endpoints is empty");
  return out;
}

Result<std::unique_ptr<KvStore>> OpenEtcdKvStore(const EtcdOptions& options) {
  if (options.endpoints.empty()) {
    return MakeError(Errc::kInvalidArgument, "strata.etcd.endpoints is empty");
  }
  STRATA_ASSIGN_OR_RETURN(std::string target, ChannelTarget(options.endpoints));
  if (options.cert_file.empty() != options.key_file.empty()) {
    return MakeError(Errc::kInvalidArgument,
                     "strata.etcd.tls.cert.location and strata.etcd.tls.key.location go together");
  }
  STRATA_ASSIGN_OR_RETURN(auto credentials, ChannelCredentials(options));
  return std::unique_ptr<KvStore>(
      std::make_unique<EtcdKvStore>(options, target, std::move(credentials)));
}

}  // namespace strata::cluster
