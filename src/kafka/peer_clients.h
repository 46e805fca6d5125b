#pragma once
// PeerClients: outbound clients to other brokers (or this one) by node id,
// found through the metadata view's registrations and replaced when a
// broker comes back at another address. The broker's own requests to its
// peers use them: the transaction coordinator's markers, the balancer's
// internal producers and consumers, so they take the path any Kafka
// client's requests take.
//
// Thread-safety: one user thread at a time (the calls themselves may be
// awaited from any executor; they run on `executor`).
#include <asio/any_io_executor.hpp>
#include <map>
#include <memory>
#include <string>

#include "cluster/metadata_view.h"
#include "net/client.h"

namespace strata::kafka {

class PeerClients {
 public:
  // `tls`: the context of an SSL inter-broker listener (null: PLAINTEXT).
  PeerClients(cluster::MetadataView& view, asio::any_io_executor executor, std::string client_id,
              net::ClientSecurity security = {});
  ~PeerClients();
  PeerClients(const PeerClients&) = delete;
  PeerClients& operator=(const PeerClients&) = delete;

  // The client for `node`; null when it is not registered.
  net::Client* For(cluster::NodeId node);
  // The client for `node` listening at `host`:`port` (replacing one for
  // another address).
  net::Client* At(cluster::NodeId node, const std::string& host, uint16_t port);
  // Closes every client; calls in flight fail.
  void CloseAll();
  const asio::any_io_executor& executor() const { return executor_; }
  cluster::MetadataView& view() { return view_; }

 private:
  cluster::MetadataView& view_;
  asio::any_io_executor executor_;
  const std::string client_id_;
  const net::ClientSecurity security_;
  std::map<cluster::NodeId, std::unique_ptr<net::Client>> clients_;
};

}  // namespace strata::kafka
