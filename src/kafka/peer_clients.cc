#include "kafka/peer_clients.h"

namespace strata::kafka {

PeerClients::PeerClients(cluster::MetadataView& view, asio::any_io_executor executor,
                         std::string client_id, net::ClientSecurity security)
    : view_(view),
      executor_(std::move(executor)),
      client_id_(std::move(client_id)),
      security_(std::move(security)) {}

PeerClients::~PeerClients() { CloseAll(); }

void PeerClients::CloseAll() {
  for (auto& [id, client] : clients_) client->Close();
}

net::Client* PeerClients::For(cluster::NodeId node) {
  auto registration = view_.Broker(node);
  const cluster::BrokerListener* l =
      registration ? cluster::InterBrokerEndpoint(registration->registration) : nullptr;
  if (l == nullptr) return nullptr;
  return At(node, l->host, static_cast<uint16_t>(l->port));
}

net::Client* PeerClients::At(cluster::NodeId node, const std::string& host, uint16_t port) {
  auto& client = clients_[node];
  if (!client || client->host() != host || client->port() != port) {
    if (client) client->Close();
    net::ClientOptions options;
    options.client_id = client_id_;
    options.max_connections = 1;
    options.security = security_;
    client = std::make_unique<net::Client>(executor_, host, port, options);
  }
  return client.get();
}

}  // namespace strata::kafka
