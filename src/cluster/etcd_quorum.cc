#include "cluster/etcd_quorum.h"

#include <algorithm>

#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace strata::cluster {

namespace {

namespace pb = etcdserverpb;

std::chrono::system_clock::time_point Deadline(std::chrono::milliseconds timeout) {
  return std::chrono::system_clock::now() + timeout;
}

// "http://127.0.0.1:2379" -> "127.0.0.1:2379".
std::string HostPort(const std::string& url) {
  size_t scheme = url.find("://");
  return scheme == std::string::npos ? url : url.substr(scheme + 3);
}

}  // namespace

Result<QuorumStatus> DescribeEtcdQuorum(const std::shared_ptr<grpc::Channel>& channel,
                                        std::chrono::milliseconds timeout, const std::string& where,
                                        std::shared_ptr<grpc::ChannelCredentials> credentials,
                                        const std::string& token) {
  pb::MemberListResponse members;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(timeout));
    if (!token.empty()) ctx.AddMetadata("token", token);
    grpc::Status st =
        pb::Cluster::NewStub(channel)->MemberList(&ctx, pb::MemberListRequest(), &members);
    if (!st.ok()) {
      return MakeError(Errc::kUnavailable,
                       "etcd member list (" + where + "): " + st.error_message());
    }
  }
  QuorumStatus out;
  for (const pb::Member& m : members.members()) {
    QuorumMember q;
    q.id = m.id();
    q.name = m.name();
    if (m.clienturls_size() > 0) q.endpoint = HostPort(m.clienturls(0));
    if (!q.endpoint.empty()) {
      // A channel per member: the shared one reaches only the member it picked.
      auto own = grpc::CreateChannel(q.endpoint, credentials);
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline(timeout));
      if (!token.empty()) ctx.AddMetadata("token", token);
      pb::StatusResponse status;
      if (pb::Maintenance::NewStub(own)->Status(&ctx, pb::StatusRequest(), &status).ok()) {
        q.reachable = true;
        q.raft_index = static_cast<int64_t>(status.raftindex());
        q.applied_index = static_cast<int64_t>(status.raftappliedindex());
        if (status.leader() != 0 && static_cast<int64_t>(status.raftterm()) >= out.term) {
          out.leader_id = status.leader();
          out.term = static_cast<int64_t>(status.raftterm());
        }
      }
    }
    out.members.push_back(std::move(q));
  }
  std::sort(out.members.begin(), out.members.end(),
            [](const QuorumMember& a, const QuorumMember& b) { return a.id < b.id; });
  for (const auto& m : out.members) {
    if (m.id == out.leader_id) out.commit_index = m.raft_index;
  }
  return out;
}

}  // namespace strata::cluster
