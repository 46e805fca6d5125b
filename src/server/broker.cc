#include "server/broker.h"

#include <fmt/format.h>

#include <chrono>

#include "admin/routes.h"
#include "base/log.h"
#include "broker/listener_certificates.h"
#include "broker/listener_sasl.h"
#include "broker/listener_tls.h"
#include "broker/local_replicas.h"
#include "kafka/fetch_session.h"
#include "security/ssl_principal.h"
#include "server/capacity.h"
#include "server/logger.h"

namespace strata::server {

Broker::Broker(config::BrokerConfig config, Clock* clock)
    : config_(std::move(config)), clock_(clock) {}

Broker::~Broker() {
  Stop();
  if (admin_thread_.joinable()) admin_thread_.join();  // no handler runs past here
  balancer_.reset();
  deleted_topics_.reset();
  controller_.reset();
  election_.reset();  // resigns, so another broker takes over at once
  session_.reset();   // leaves the cluster at once (lease revoked)
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  // Joins the connection threads and destroys the connections' coroutine
  // frames while everything they refer to still exists.
  network_.reset();
  if (maintenance_thread_.joinable()) maintenance_thread_.join();
  if (topics_) {
    topics_->Shutdown();  // closes (flushes) every log
    Status st = broker::MarkCleanShutdown(config_.log_dir());
    if (!st.ok()) Log()->warn("marking a clean shutdown: {}", st.error().message);
  }
}

Result<std::unique_ptr<cluster::Metadata>> Broker::OpenMetadata(const std::filesystem::path& dir) {
  cluster::MetadataOptions options;
  options.local_node = cluster::NodeId(config_.node_id());
  options.dir = dir / "strata-metadata";
  options.legacy_dir = dir;
  options.prefix = config_.Get("strata.etcd.prefix");
  options.timeout =
      std::chrono::milliseconds(config_.GetLong("strata.etcd.request.timeout.ms") * 2);
  if (config_.Get("strata.metadata.backend") == "etcd") {
    options.backend = cluster::MetadataOptions::Backend::kEtcd;
    auto endpoints = cluster::ParseEtcdEndpoints(config_.Get("strata.etcd.endpoints"));
    if (!endpoints.ok()) return endpoints.take_error();
    options.etcd.endpoints = std::move(*endpoints);
    options.etcd.request_timeout =
        std::chrono::milliseconds(config_.GetLong("strata.etcd.request.timeout.ms"));
    options.etcd.ca_file = config_.Get("strata.etcd.tls.ca.location");
    options.etcd.cert_file = config_.Get("strata.etcd.tls.cert.location");
    options.etcd.key_file = config_.Get("strata.etcd.tls.key.location");
    options.etcd.user = config_.Get("strata.etcd.user");
    options.etcd.password = config_.Get("strata.etcd.password");
  }
  auto md = cluster::Metadata::Open(options);
  if (!md.ok()) return md.take_error();
  Log()->info("cluster metadata in {} under {}", (*md)->kv().Describe(), (*md)->keys().prefix());
  return std::move(*md);
}

Status Broker::Register() {
  cluster::BrokerSessionOptions options;
  options.registration.node_id = cluster::NodeId(config_.node_id());
  options.registration.listeners = context_->advertised;
  options.registration.inter_broker_listener = config_.inter_broker_listener();
  options.registration.rack = config_.Get("broker.rack");
  options.registration.incarnation = cluster::UuidToBase64(cluster::RandomTopicId());
  options.registration.clean_shutdown = clean_shutdown_;
  options.registration.new_log_dir_epoch = new_log_dir_epoch_;
  if (config_.GetBool("strata.broker.standby")) {
    options.registration.state = cluster::BrokerState::kStandby;
  }
  options.registration.capacity = DeclaredCapacity(config_);
  options.ttl = std::chrono::milliseconds(config_.GetLong("strata.etcd.lease.ttl.ms"));
  STRATA_ASSIGN_OR_RETURN(session_, cluster::BrokerSession::Start(*metadata_, std::move(options)));
  admin::RegisterSessionGauges(*session_);
  if (new_log_dir_epoch_ == 0) {  // new as of this registration: data comes after it
    new_log_dir_epoch_ = session_->epoch().value();
    STRATA_RETURN_IF_ERROR(broker::WriteNewLogDirMarker(config_.log_dir(), new_log_dir_epoch_));
    session_->SetNewLogDirEpoch(new_log_dir_epoch_);
    topics_->SetLostDataBefore(new_log_dir_epoch_);
    // Replicas of partitions made before Start and after that revision
    // (none yet counting on lost data) open now rather than at the next change.
    Status st = topics_->ReconcileNow();
    if (!st.ok()) Log()->warn("reconciling after registering: {}", st.error().message);
  }
  broker::TopicManager* topics = topics_.get();
  cluster::BrokerSession* session = session_.get();
  // Partitions are given up only when the lease is known lost (see BrokerSession).
  session_->OnChange(
      [topics, session](bool, cluster::BrokerEpoch) { topics->SetFenced(session->lease_lost()); });
  election_ = cluster::ControllerElection::Start(*metadata_, *session_, nullptr);
  cluster::ControllerElection* election = election_.get();
  metadata_->SetControllerFence([election]() -> std::optional<cluster::KvCompare> {
    if (!election->active()) return std::nullopt;
    return election->Fence();
  });
  const config::ConfigDef* unclean = config::FindTopicConfig("unclean.leader.election.enable");
  cluster::ControllerOptions controller_options{
      .unclean_allowed =
          [this, unclean](const cluster::TopicRecord& t) {
            auto it = t.configs.find(unclean->name);
            return config::ToBool(it != t.configs.end() ? it->second
                                                        : config_.TopicDefault(*unclean));
          },
      .min_insync_replicas = [topics](const cluster::TopicRecord& t) -> int {
        auto info = topics->GetTopicInfo(t.name);
        return info ? info->min_insync_replicas : 1;
      },
      .auto_leader_rebalance = config_.GetBool("auto.leader.rebalance.enable"),
      .leader_imbalance_check_interval =
          std::chrono::seconds(config_.GetLong("leader.imbalance.check.interval.seconds")),
      .leader_imbalance_percent =
          static_cast<int>(config_.GetLong("leader.imbalance.per.broker.percentage")),
  };
  controller_ =
      std::make_unique<cluster::Controller>(*metadata_, *election_, std::move(controller_options));
  cluster::DeletedTopicCleaner::RemoteDataDeleter delete_remote;
  if (tiered::RemoteLogManager* remote = topics->remote()) {
    delete_remote = [remote](const cluster::TopicRecord& t) {
      return remote->DeleteTopicData(t.name, cluster::UuidToBase64(t.id), t.partitions);
    };
  }
  deleted_topics_ = std::make_unique<cluster::DeletedTopicCleaner>(*metadata_, *election_,
                                                                   std::move(delete_remote));
  forwarder_ = std::make_unique<kafka::ControllerForwarder>(
      *context_, io_.get_executor(), [election] { return election->active(); },
      [session]() -> std::optional<std::string> {
        if (!session->fenced()) return std::nullopt;
        return "the cluster metadata store (etcd) cannot be reached: this broker's lease has not "
               "been renewed for a TTL; topic changes resume when it is back";
      },
      std::chrono::milliseconds(config_.GetLong("controller.socket.timeout.ms")));
  context_->forwarder = forwarder_.get();
  context_->controller = controller_.get();
  kafka::BrokerContext* ctx = context_.get();
  balancer::BalancerOptions balancer_options = balancer::BalancerOptions::FromConfig(config_);
  balancer_options.inter_broker_security = inter_broker_security_;
  balancer_ = std::make_unique<balancer::BalancerService>(
      *metadata_, *controller_, io_.get_executor(), std::move(balancer_options),
      [ctx] { return balancer::EnsureBalancerTopics(*ctx); });
  admin_context_->balancer.store(balancer_.get());
  admin::RegisterBalancerGauges(*balancer_);
  if (const int64_t interval = config_.GetLong("strata.balancer.metrics.interval.ms");
      interval > 0) {
    balancer::LoadReporterOptions reporter{
        cluster::NodeId(config_.node_id()), std::chrono::milliseconds(interval), config_.log_dir(),
        config_.GetLong("strata.broker.capacity.disk.bytes"), inter_broker_security_};
    load_reporter_ = std::make_unique<balancer::LoadReporter>(
        *topics_, metadata_->view(), io_.get_executor(), std::move(reporter));
  }
  return Status::Ok();
}

Status Broker::Start() {
  std::filesystem::path dir(config_.log_dir());
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return MakeError(Errc::kIoError, fmt::format("log.dirs {}: {}", dir.string(), ec.message()));
  STRATA_ASSIGN_OR_RETURN(metadata_, OpenMetadata(dir));
  store_ = metadata_.get();
  STRATA_ASSIGN_OR_RETURN(new_log_dir_epoch_, broker::ReadNewLogDirMarker(dir));
  if (new_log_dir_epoch_ >= 0)
    Log()->info("the log directory {} is new: replicas start empty", dir.string());
  STRATA_ASSIGN_OR_RETURN(clean_shutdown_, broker::TakeCleanShutdownMarker(dir));
  if (!clean_shutdown_) Log()->warn("the previous run did not shut down cleanly");
  // Before any local data is opened, or deleted as stray: it must be this
  // cluster's and this node's.
  STRATA_RETURN_IF_ERROR(
      broker::CheckMetaProperties(dir, metadata_->cluster_id(), config_.node_id()));
  STRATA_ASSIGN_OR_RETURN(broker::ReplicaSelectorKind selector,
                          broker::ParseReplicaSelector(config_.Get("replica.selector.class")));
  // With this broker's dynamic keystore, if one replaced the static one:
  // replicas may connect before the listeners (and their certificates) start.
  STRATA_ASSIGN_OR_RETURN(
      inter_broker_security_,
      broker::InterBrokerClientSecurity(
          config_, metadata_->BrokerConfigs(std::to_string(config_.node_id()))));
  certificates_ = std::make_unique<broker::ListenerCertificates>(config_);
  if (inter_broker_security_.tls) {
    // Connections to other brokers present the inter-broker listener's
    // keystore as it is now (replaced without a restart), once it is added.
    inter_broker_security_.tls_source = [certificates = certificates_.get(),
                                         name = config_.inter_broker_listener()] {
      return certificates->ClientContext(name);
    };
  }
  topics_ = std::make_unique<broker::TopicManager>(config_, *metadata_, clock_);
  topics_->SetInterBrokerSecurity(inter_broker_security_);
  // Consumers long-polling a follower (KIP-392) wake when its mark moves,
  // acks=all produces when their leadership goes.
  topics_->SetWakeListener([this](const TopicPartition& tp) { notifier_.Notify(tp); });
  if (new_log_dir_epoch_ >= 0) {  // lost before its registration, whenever that is
    topics_->SetLostDataBefore(new_log_dir_epoch_ > 0 ? new_log_dir_epoch_ : INT64_MAX);
  }
  STRATA_RETURN_IF_ERROR(topics_->Start());
  producer_ids_ = std::make_unique<kafka::ProducerIdAllocator>(*store_);
  context_ = std::make_unique<kafka::BrokerContext>(
      kafka::BrokerContext{config_, *store_, *topics_, notifier_, *producer_ids_, clock_});
  context_->replica_selector = selector;
  context_->inter_broker_security = inter_broker_security_;
  STRATA_ASSIGN_OR_RETURN(
      sasl_, broker::SaslMechanisms::Create(
                 config_,
                 [this](security::ScramMechanism mechanism,
                        std::string_view user) -> std::optional<security::ScramCredential> {
                   auto creds = metadata_->ScramCredentials(std::string(user));
                   if (!creds) return std::nullopt;
                   auto it = creds->by_mechanism.find(mechanism);
                   if (it == creds->by_mechanism.end()) return std::nullopt;
                   return it->second;
                 }));
  context_->sasl = sasl_.get();
  context_->listener_certificates = certificates_.get();
  STRATA_ASSIGN_OR_RETURN(authorizer_, broker::AclAuthorizer::Create(config_, *metadata_));
  context_->authorizer = authorizer_.get();
  fetch_sessions_ = std::make_shared<kafka::FetchSessionCache>(
      int(config_.GetLong("max.incremental.fetch.session.cache.slots")));
  context_->fetch_sessions = fetch_sessions_.get();
  kafka::RegisterFetchSessionMetrics(fetch_sessions_);
  quotas_ = std::make_unique<broker::ClientQuotas>(config_, *metadata_);
  context_->quotas = quotas_.get();
  STRATA_RETURN_IF_ERROR(StartGroupCoordinator());
  STRATA_RETURN_IF_ERROR(StartTxnCoordinator());
  ListenForCoordinatorLeadership();

  const int threads = static_cast<int>(config_.GetLong("num.network.threads"));
  network_ = std::make_unique<net::IoContextPool>(threads);
  dispatcher_ = std::make_unique<kafka::Dispatcher>(*context_);
  STRATA_RETURN_IF_ERROR(StartListeners());
  context_->metadata = metadata_.get();
  // After the fields above: the admin thread reads them.
  STRATA_RETURN_IF_ERROR(StartAdmin());
  STRATA_RETURN_IF_ERROR(Register());

  work_ = std::make_unique<asio::executor_work_guard<asio::io_context::executor_type>>(
      io_.get_executor());
  asio::co_spawn(maintenance_io_, PeriodicTasks(), asio::detached);
  maintenance_thread_ = std::thread([this] { maintenance_io_.run(); });
  asio::co_spawn(io_, GroupCoordinatorTicks(), asio::detached);
  asio::co_spawn(io_, AbortTimedOutTransactions(), asio::detached);
  asio::co_spawn(io_, ExpireTransactionalIds(), asio::detached);
  network_->Start("strata-net");
  threads_.emplace_back([this] { io_.run(); });
  std::string bound;
  for (size_t i = 0; i < servers_.size(); ++i) {
    const auto& l = config_.listeners()[i];
    bound +=
        fmt::format("{}{} {}://{}:{}", i > 0 ? "," : "", l.listener_name,
                    config::SecurityProtocolName(l.protocol), l.host, servers_[i]->bound_port());
  }
  Log()->info("node {} cluster {} listening on {} (brokers on {}; data in {}, {} threads)",
              config_.node_id(), store_->cluster_id(), bound, config_.inter_broker_listener(),
              config_.log_dir(), threads);
  return Status::Ok();
}

// The listener's TLS context and principal mapping, and whether it requires
// SASL.
Status Broker::ListenerSecurity(const config::Endpoint& listener, net::ServerOptions& options) {
  using config::SecurityProtocol;
  const auto protocol = listener.protocol;
  options.sasl =
      protocol == SecurityProtocol::kSaslPlaintext || protocol == SecurityProtocol::kSaslSsl;
  options.sasl_max_receive_bytes =
      static_cast<int32_t>(config_.GetLong("sasl.server.max.receive.size"));
  options.max_idle_ms = config_.GetLong("connections.max.idle.ms");
  if (protocol != SecurityProtocol::kSsl && protocol != SecurityProtocol::kSaslSsl) {
    return Status::Ok();
  }
  auto tls = certificates_->Add(listener.listener_name,
                                listener.listener_name == config_.inter_broker_listener());
  if (!tls.ok()) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("listener {}: {}", listener.listener_name, tls.error().message));
  }
  options.tls = std::move(tls).value();
  options.tls_source = [certificates = certificates_.get(), name = listener.listener_name] {
    return certificates->Current(name);
  };
  // On SASL_SSL the principal is SASL's; the certificate maps only on SSL.
  if (protocol != SecurityProtocol::kSsl) return Status::Ok();
  const std::string lower = broker::ListenerKeyName(listener.listener_name);
  const std::string rules = config_.ListenerValue(lower, "ssl.principal.mapping.rules")
                                .value_or(config_.Get("ssl.principal.mapping.rules"));
  auto mapper = security::SslPrincipalMapper::Parse(rules);
  if (!mapper.ok()) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("listener {}: ssl.principal.mapping.rules: {}",
                                 listener.listener_name, mapper.error().message));
  }
  auto shared = std::make_shared<security::SslPrincipalMapper>(std::move(mapper).value());
  options.tls_principal = [shared](X509* cert) {
    return security::PrincipalFromCertificate(cert, *shared);
  };
  return Status::Ok();
}

// A server per listener; the advertised endpoints get the ports bound.
Status Broker::StartListeners() {
  // Every listener's security first (loading a keystore takes a while), then
  // the binds back to back: a client that finds one listener open finds all.
  std::vector<net::ServerOptions> listener_options(config_.listeners().size());
  for (size_t i = 0; i < config_.listeners().size(); ++i) {
    const config::Endpoint& listener = config_.listeners()[i];
    net::ServerOptions& options = listener_options[i];
    STRATA_RETURN_IF_ERROR(ListenerSecurity(listener, options));
    options.listener_name = listener.listener_name;
    options.host = listener.host;
    options.port = listener.port;
    options.max_request_bytes = static_cast<int32_t>(config_.GetLong("socket.request.max.bytes"));
  }
  for (size_t i = 0; i < listener_options.size(); ++i) {
    servers_.push_back(
        std::make_unique<net::Server>(io_, *network_, listener_options[i], *dispatcher_));
    STRATA_RETURN_IF_ERROR(servers_.back()->Start());
    const config::Endpoint& advertised = config_.advertised_listeners()[i];
    context_->advertised.push_back(
        {advertised.listener_name, advertised.host,
         advertised.port != 0 ? advertised.port : servers_.back()->bound_port()});
  }
  return Status::Ok();
}

void Broker::Wait() {
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  if (network_) network_->Join();
}

void Broker::Stop() {
  // Before the io they produce and fetch on stops.
  load_reporter_.reset();
  if (balancer_) balancer_->Shutdown();
  for (auto& server : servers_) server->Stop();
  if (admin_) admin_->Stop();
  admin_io_.stop();
  work_.reset();
  io_.stop();
  if (network_) network_->Stop();
  maintenance_io_.stop();
}

asio::awaitable<void> Broker::PeriodicTasks() {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  int64_t check_ms = config_.GetLong("log.retention.check.interval.ms");
  int64_t next_retention = clock_->MonotonicMs() + check_ms;
  const int64_t marks_ms = config_.GetLong("replica.high.watermark.checkpoint.interval.ms");
  int64_t next_marks = clock_->MonotonicMs() + marks_ms;
  const int64_t producers_ms = config_.GetLong("producer.id.expiration.check.interval.ms");
  const int64_t producer_expiration_ms = config_.GetLong("producer.id.expiration.ms");
  int64_t next_producers = clock_->MonotonicMs() + producers_ms;
  for (;;) {
    timer.expires_after(std::chrono::milliseconds(std::min<int64_t>(1000, marks_ms)));
    co_await timer.async_wait(asio::use_awaitable);
    topics_->FlushDue();
    SettleNewLogDir();
    quotas_->ExpireIdleSensors(clock_->MonotonicMs());
    if (clock_->MonotonicMs() >= next_marks) {
      Status st = topics_->CheckpointHighWatermarks();
      if (!st.ok()) Log()->warn("checkpointing high watermarks: {}", st.error().message);
      next_marks = clock_->MonotonicMs() + marks_ms;
    }
    if (clock_->MonotonicMs() >= next_retention) {
      int deleted = topics_->EnforceRetention();
      if (deleted > 0) Log()->info("retention deleted {} segments", deleted);
      next_retention = clock_->MonotonicMs() + check_ms;
    }
    if (clock_->MonotonicMs() >= next_producers) {
      size_t expired = topics_->ExpireProducers(producer_expiration_ms);
      if (expired > 0) Log()->info("expired {} idle producers", expired);
      next_producers = clock_->MonotonicMs() + producers_ms;
    }
  }
}

// HTTPS and who may use the admin API (strata.admin.ssl.*, token file,
// admin principals).
Result<admin::HttpServerOptions> Broker::AdminOptions() const {
  admin::HttpServerOptions options;
  const std::string client_auth = config_.Get("strata.admin.ssl.client.auth");
  if (!config_.Get("strata.admin.ssl.keystore.location").empty()) {
    net::TlsSettings tls;
    tls.keystore_type = config_.Get("strata.admin.ssl.keystore.type");
    tls.keystore_location = config_.Get("strata.admin.ssl.keystore.location");
    tls.keystore_password = config_.Get("strata.admin.ssl.keystore.password");
    tls.key_password = config_.Get("strata.admin.ssl.key.password");
    tls.truststore_location = config_.Get("strata.admin.ssl.truststore.location");
    tls.client_auth = client_auth;
    auto context = net::MakeServerTlsContext(tls);
    if (!context.ok()) {
      return MakeError(Errc::kInvalidArgument,
                       "admin API (strata.admin.ssl.*): " + context.error().message);
    }
    options.tls = std::move(context).value();
    auto mapper = std::make_shared<security::SslPrincipalMapper>();
    options.tls_principal = [mapper](X509* cert) {
      return security::PrincipalFromCertificate(cert, *mapper);
    };
  }
  const auto admins = config::SplitList(config_.Get("strata.admin.admin.principals"));
  STRATA_ASSIGN_OR_RETURN(
      options.access, admin::AdminAccess::Load(config_.Get("strata.admin.token.file"),
                                               std::set<std::string>(admins.begin(), admins.end()),
                                               options.tls != nullptr && client_auth != "none"));
  return options;
}

Status Broker::StartAdmin() {
  admin_context_ = std::make_unique<admin::AdminContext>(*context_);
  admin::RegisterBrokerGauges(*context_);
  for (size_t i = 0; i < servers_.size(); ++i) {
    metrics::Global().SetGauge(
        "strata_connections", "Open Kafka connections, per listener",
        {{"listener", config_.listeners()[i].listener_name}},
        [server = servers_[i].get()] { return static_cast<double>(server->connections()); });
  }
  const std::string& listener = config_.Get("strata.admin.listener");
  if (listener.empty()) return Status::Ok();
  size_t colon = listener.rfind(':');
  if (colon == std::string::npos) {
    return MakeError(Errc::kInvalidArgument, "strata.admin.listener must be host:port");
  }
  uint16_t port = static_cast<uint16_t>(std::stoi(listener.substr(colon + 1)));
  STRATA_ASSIGN_OR_RETURN(admin::HttpServerOptions options, AdminOptions());
  const bool https = options.tls != nullptr;
  admin_ = std::make_unique<admin::HttpServer>(admin_io_, listener.substr(0, colon), port,
                                               std::move(options));
  admin::RegisterAdminRoutes(*admin_, *admin_context_);
  STRATA_RETURN_IF_ERROR(admin_->Start());
  admin_thread_ = std::thread([this] { admin_io_.run(); });
  Log()->info("admin API and console on {}://{}:{}/ (/metrics, /console, /v1/...)",
              https ? "https" : "http", listener.substr(0, colon), admin_->bound_port());
  return Status::Ok();
}

}  // namespace strata::server
