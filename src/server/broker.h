#pragma once
// Broker: one Kafka broker process. Owns the metadata store, the topics and
// their logs, the network server with the Kafka API layer behind it
// (kafka::Dispatcher), the admin API, the controller's services and the
// background tasks (retention, flush), and starts and stops them in order.
#include <asio.hpp>
#include <memory>
#include <thread>
#include <vector>

#include "admin/http_server.h"
#include "admin/routes.h"
#include "balancer/service/balancer_service.h"
#include "balancer/service/load_reporter.h"
#include "base/clock.h"
#include "base/result.h"
#include "broker/acl_authorizer.h"
#include "broker/append_notifier.h"
#include "broker/client_quotas.h"
#include "broker/listener_certificates.h"
#include "broker/listener_sasl.h"
#include "broker/topic_manager.h"
#include "cluster/broker_session.h"
#include "cluster/controller.h"
#include "cluster/controller_election.h"
#include "cluster/deleted_topic_cleaner.h"
#include "cluster/metadata.h"
#include "config/broker_config.h"
#include "coordinator/group_coordinator.h"
#include "coordinator/txn_coordinator.h"
#include "kafka/broker_context.h"
#include "kafka/controller_forwarding.h"
#include "kafka/dispatcher.h"
#include "kafka/producer_id_allocator.h"
#include "kafka/txn_marker_channel.h"
#include "kafka/txn_verification.h"
#include "net/server.h"

namespace strata::server {

class Broker {
 public:
  explicit Broker(config::BrokerConfig config, Clock* clock = Clock::Real());
  ~Broker();

  // Opens metadata and logs (recovery), binds the listener, starts threads.
  Status Start();
  // Blocks until Stop() (from a signal handler thread or another thread).
  void Wait();
  void Stop();
  // Controlled shutdown (SIGTERM, `controlled.shutdown.enable`): asks the
  // controller to move this broker's leaderships and ISR memberships to
  // other live replicas, and returns when none is left that could move, or
  // after one lease TTL (when a crashed broker's would move anyway). Call
  // before Stop(): the broker serves meanwhile.
  void ControlledShutdown();
  // Clears the new-log-directory marker once no partition counts on this
  // broker's old data (see new_log_dir.cc); on the maintenance thread.
  void SettleNewLogDir();

  // The first listener's bound port.
  uint16_t port() const { return servers_.empty() ? 0 : servers_.front()->bound_port(); }
  // The admin API's port (0 without strata.admin.listener).
  uint16_t admin_port() const { return admin_ ? admin_->bound_port() : 0; }

 private:
  asio::awaitable<void> PeriodicTasks();
  Status StartAdmin();
  // The embedded store in `dir`, or etcd (strata.metadata.backend).
  Result<std::unique_ptr<cluster::Metadata>> OpenMetadata(const std::filesystem::path& dir);
  // Registers this broker (listeners as advertised) under its lease.
  Status Register();
  // Starts a net::Server per listener and fills BrokerContext::advertised.
  Status StartListeners();
  Result<admin::HttpServerOptions> AdminOptions() const;
  Status ListenerSecurity(const config::Endpoint& listener, net::ServerOptions& options);

  // The group and transaction coordinators (coordinators.cc): each serves
  // the keys of the partitions of its topic this broker leads, loaded as it
  // gains their leadership and dropped as it loses it.
  Status StartGroupCoordinator();
  Status StartTxnCoordinator();
  void ListenForCoordinatorLeadership();
  std::unique_ptr<coordinator::CoordinatorLog> MakeCoordinatorLog(const std::string& topic,
                                                                  const char* partitions_key);
  asio::awaitable<void> GroupCoordinatorTicks();
  // Every transaction.abort.timed.out.transaction.cleanup.interval.ms.
  asio::awaitable<void> AbortTimedOutTransactions();
  // Every transaction.remove.expired.transaction.cleanup.interval.ms:
  // tombstones for the ids unused for transactional.id.expiration.ms.
  asio::awaitable<void> ExpireTransactionalIds();

  config::BrokerConfig config_;
  Clock* clock_;
  // Accepting and the group coordinator's timers.
  asio::io_context io_;
  // The admin HTTP server, on its own thread: a slow answer (a dry-run plan
  // of a large cluster, /metrics over many partitions) delays no timer.
  asio::io_context admin_io_;
  std::thread admin_thread_;
  // Kafka connections (num.network.threads contexts, one thread each).
  std::unique_ptr<net::IoContextPool> network_;
  // Flushing and retention block on the disk (fsync, unlink); they run here,
  // on their own thread, so they never stall the network threads.
  asio::io_context maintenance_io_;
  std::thread maintenance_thread_;
  // Before every user: the servers ask it for each connection's TLS context,
  // the inter-broker clients (replication, forwarding, the balancer's) for
  // theirs.
  std::unique_ptr<broker::ListenerCertificates> certificates_;
  std::unique_ptr<cluster::Metadata> metadata_;
  cluster::MetadataStore* store_ = nullptr;                // metadata_, as the broker's store
  std::unique_ptr<cluster::BrokerSession> session_;        // registration and lease
  std::unique_ptr<cluster::ControllerElection> election_;  // campaigns with session_'s lease
  std::unique_ptr<cluster::Controller> controller_;        // acts while election_ is active
  std::unique_ptr<cluster::DeletedTopicCleaner> deleted_topics_;  // likewise
  std::unique_ptr<balancer::BalancerService> balancer_;           // likewise
  std::unique_ptr<balancer::LoadReporter> load_reporter_;         // publishes this broker's load
  std::unique_ptr<kafka::ControllerForwarder> forwarder_;         // controller-bound requests
  std::unique_ptr<broker::TopicManager> topics_;
  bool clean_shutdown_ = true;  // how the previous run ended (TakeCleanShutdownMarker)
  // The epoch at which the log directory was new (ReadNewLogDirMarker),
  // until no partition record counts on older data; -1: not new. Set at
  // start, then read and cleared on the maintenance thread.
  int64_t new_log_dir_epoch_ = -1;
  broker::AppendNotifier notifier_;
  std::unique_ptr<kafka::ProducerIdAllocator> producer_ids_;
  std::unique_ptr<kafka::BrokerContext> context_;
  std::unique_ptr<kafka::Dispatcher> dispatcher_;  // the server's request handler
  std::unique_ptr<admin::AdminContext> admin_context_;
  std::unique_ptr<coordinator::GroupCoordinator> group_coordinator_;
  std::unique_ptr<coordinator::TxnCoordinator> txn_coordinator_;
  std::unique_ptr<kafka::TxnMarkerChannel> txn_markers_;  // on io_
  std::unique_ptr<kafka::TxnPartitionVerifier> txn_verifier_;
  std::vector<std::unique_ptr<net::Server>> servers_;  // one per listener
  // How this broker reaches its peers' SSL inter-broker listener (null: PLAINTEXT).
  net::ClientSecurity inter_broker_security_;
  std::unique_ptr<broker::SaslMechanisms> sasl_;
  std::unique_ptr<broker::AclAuthorizer> authorizer_;
  std::unique_ptr<broker::ClientQuotas> quotas_;
  // Shared with the metrics registry's gauges, which may outlive the broker.
  std::shared_ptr<kafka::FetchSessionCache> fetch_sessions_;
  std::unique_ptr<admin::HttpServer> admin_;
  std::vector<std::thread> threads_;
  std::unique_ptr<asio::executor_work_guard<asio::io_context::executor_type>> work_;
};

}  // namespace strata::server
