#pragma once
// PeerClients: outbound clients to other brokers (or this one) by node id,
// found through the metadata view's registrations and replaced when a
// broker comes back at another address; and ProduceToLeader, one Produce
// (acks=all) of records to a partition's leader. The broker's own internal
// producers and consumers (load samples, balancer decisions) use them, so
// their records take the path any Kafka client's take.
//
// Thread-safety: one user thread at a time; the calls run on `executor`
// and the blocking helpers wait for them there.
#include <asio/any_io_executor.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "cluster/metadata_view.h"
#include "net/client.h"

namespace strata::balancer {

class PeerClients {
 public:
  PeerClients(cluster::MetadataView& view, asio::any_io_executor executor, std::string client_id);
  ~PeerClients();

  // The client for `node`; null when it is not registered.
  net::Client* For(cluster::NodeId node);
  const asio::any_io_executor& executor() const { return executor_; }
  cluster::MetadataView& view() { return view_; }

 private:
  cluster::MetadataView& view_;
  asio::any_io_executor executor_;
  const std::string client_id_;
  std::map<cluster::NodeId, std::unique_ptr<net::Client>> clients_;
};

// Produces `records` (key, value) in one batch to partition `partition` of
// `topic` at its leader, acks=all, waiting at most `timeout`.
Status ProduceToLeader(PeerClients& peers, const std::string& topic, int32_t partition,
                       const std::vector<std::pair<std::string, std::string>>& records,
                       int64_t timestamp_ms, std::chrono::milliseconds timeout);

}  // namespace strata::balancer
