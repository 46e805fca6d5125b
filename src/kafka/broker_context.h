#pragma once
// BrokerContext: what every API handler may use. Owned by the broker
// (server::Broker); handlers borrow it for the duration of one request.
#include <asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "base/clock.h"
#include "broker/append_notifier.h"
#include "broker/replica_selector.h"
#include "broker/topic_manager.h"
#include "cluster/metadata_store.h"
#include "cluster/records.h"
#include "config/broker_config.h"
#include "kafka/producer_id_allocator.h"

namespace strata::coordinator {
class GroupCoordinator;
class TxnCoordinator;
}  // namespace strata::coordinator
namespace strata::broker {
class AclAuthorizer;
class ClientQuotas;
class SaslMechanisms;
class ListenerCertificates;
}  // namespace strata::broker
namespace strata::cluster {
class Controller;
class Metadata;
}  // namespace strata::cluster

namespace strata::kafka {

class ControllerForwarder;
class FetchSessionCache;
class TxnMarkerChannel;
class TxnPartitionVerifier;

struct BrokerContext {
  const config::BrokerConfig& config;
  cluster::MetadataStore& store;
  broker::TopicManager& topics;
  broker::AppendNotifier& notifier;
  ProducerIdAllocator& producer_ids;
  Clock* clock;
  // What Metadata/DescribeCluster tell clients (the bound port when the
  // listener asked for port 0).
  // The TLS context of connections to peers (null: PLAINTEXT inter-broker).
  net::ClientSecurity inter_broker_security;
  // This broker's listeners as advertised (bound ports filled in).
  std::vector<cluster::BrokerListener> advertised;
  // Consumer groups and committed offsets; set once at start-up.
  coordinator::GroupCoordinator* group_coordinator = nullptr;
  // Transactions, and the markers that end them; set once at start-up.
  coordinator::TxnCoordinator* txn_coordinator = nullptr;
  TxnMarkerChannel* txn_markers = nullptr;
  // Asks coordinators about transactional produces (KIP-890); set at start-up.
  TxnPartitionVerifier* txn_verifier = nullptr;
  // The cluster metadata view (brokers, partition records); set at start-up.
  cluster::Metadata* metadata = nullptr;
  // Sends controller-bound work to the active controller; set at start-up.
  ControllerForwarder* forwarder = nullptr;
  // What the active controller does on request (ElectLeaders); set at start-up.
  cluster::Controller* controller = nullptr;
  // The SASL mechanisms of the SASL listeners; set at start-up.
  broker::SaslMechanisms* sasl = nullptr;
  // The TLS contexts of the SSL and SASL_SSL listeners (dynamic keystore
  // updates); set at start-up.
  broker::ListenerCertificates* listener_certificates = nullptr;
  // authorizer.class.name's authorizer; null: every request is allowed.
  broker::AclAuthorizer* authorizer = nullptr;
  // The client quota managers (throttling); set at start-up.
  broker::ClientQuotas* quotas = nullptr;
  // Open fetch sessions (KIP-227); null: every fetch is answered without one.
  FetchSessionCache* fetch_sessions = nullptr;
  // replica.selector.class (KIP-392); set at start-up.
  broker::ReplicaSelectorKind replica_selector = broker::ReplicaSelectorKind::kLeaderOnly;
};

}  // namespace strata::kafka
