#pragma once
// The etcd cluster's quorum as KvStore::DescribeQuorum reports it: the
// members (Cluster.MemberList) and each one's raft position (Maintenance.
// Status, asked of every member on a channel of its own). Internal to
// EtcdKvStore.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "cluster/kv_store.h"

namespace strata::cluster {

// `channel` reaches any member; each member is asked within `timeout`. An
// unreachable member is listed with reachable = false.
// `credentials`: how to reach each member (TLS or not); `token`: etcd's
// authentication token, empty without authentication.
Result<QuorumStatus> DescribeEtcdQuorum(const std::shared_ptr<grpc::Channel>& channel,
                                        std::chrono::milliseconds timeout, const std::string& where,
                                        std::shared_ptr<grpc::ChannelCredentials> credentials,
                                        const std::string& token);

}  // namespace strata::cluster
