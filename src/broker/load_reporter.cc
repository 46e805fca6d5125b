#include "broker/load_reporter.h"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <asio/co_spawn.hpp>
#include <asio/use_future.hpp>
#include <chrono>

#include "broker/cluster_state.h"
#include "broker/log.h"
#include "broker/topic_manager.h"
#include "protocol/batch_builder.h"
#include "protocol/messages/produce.h"

namespace strata::broker {

namespace {

constexpr int16_t kProduceVersion = 9;

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

}  // namespace

LoadReporter::LoadReporter(TopicManager& topics, cluster::MetadataView& view,
                           asio::any_io_executor io, LoadReporterOptions options)
    : topics_(topics),
      view_(view),
      io_(std::move(io)),
      options_(std::move(options)),
      published_(&metrics::Global().GetCounter("strata_balancer_metrics_published_total",
                                               "load samples published to __strata_metrics")),
      failures_(&metrics::Global().GetCounter(
          "strata_balancer_metrics_publish_failures_total",
          "load samples that could not be published to __strata_metrics")) {
  last_ms_ = SteadyMs();
  last_cpu_s_ = ProcessCpuSeconds();
  thread_ = std::thread([this] { Run(); });
}

LoadReporter::~LoadReporter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& [id, c] : clients_) c->Close();
}

void LoadReporter::Run() {
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (wake_.wait_for(lock, options_.interval, [this] { return stopping_; })) return;
    }
    const balancer::MetricsSample sample = TakeSample();
    Status st = Publish(sample);
    if (st.ok()) {
      published_->Add();
      continue;
    }
    failures_->Add();
    if (SteadyMs() - last_warning_ms_ >= 60'000) {
      last_warning_ms_ = SteadyMs();
      Log()->warn("publishing a load sample to {}: {}", balancer::kMetricsTopic,
                  st.error().message);
    }
  }
}

balancer::MetricsSample LoadReporter::TakeSample() {
  const int64_t now = SteadyMs();
  const double seconds = std::max(0.001, static_cast<double>(now - last_ms_) / 1000);
  balancer::MetricsSample s;
  s.broker = options_.node;
  s.timestamp_ms = WallMs();
  s.window_ms = now - last_ms_;
  std::map<std::string, Counters> seen;
  for (const auto& p : topics_.LocalPartitions()) {
    PartitionTraffic& t = p->traffic();
    Counters c{t.bytes_in.load(), t.messages_in.load(), t.bytes_out.load(),
               t.replication_bytes_in.load(), t.replication_bytes_out.load()};
    const std::string key = p->tp().ToString();
    Counters before = last_.count(key) ? last_[key] : Counters{};
    seen[key] = c;
    auto rate = [&](int64_t a, int64_t b) {
      return static_cast<double>(std::max<int64_t>(0, a - b)) / seconds;
    };
    balancer::PartitionSample ps;
    ps.topic = p->tp().topic;
    ps.partition = p->tp().partition;
    ps.leader = p->leader() == options_.node;
    ps.bytes_in_per_sec = rate(c.bytes_in, before.bytes_in);
    ps.messages_in_per_sec = rate(c.messages_in, before.messages_in);
    ps.bytes_out_per_sec = rate(c.bytes_out, before.bytes_out);
    ps.replication_bytes_in_per_sec = rate(c.replication_in, before.replication_in);
    ps.replication_bytes_out_per_sec = rate(c.replication_out, before.replication_out);
    ps.size_bytes = p->log()->size_bytes();
    s.partitions.push_back(std::move(ps));
  }
  last_ = std::move(seen);
  s.totals = Totals(seconds, s);
  last_ms_ = now;
  return s;
}

balancer::BrokerTotals LoadReporter::Totals(double seconds, const balancer::MetricsSample& s) {
  balancer::BrokerTotals t;
  const double cpu = ProcessCpuSeconds();
  t.cpu_cores_used = std::max(0.0, cpu - last_cpu_s_) / seconds;
  last_cpu_s_ = cpu;
  for (const auto& p : s.partitions) {
    t.network_in_bytes_per_sec += p.bytes_in_per_sec + p.replication_bytes_in_per_sec;
    t.network_out_bytes_per_sec += p.bytes_out_per_sec + p.replication_bytes_out_per_sec;
  }
  struct statvfs fs {};
  if (statvfs(options_.log_dir.c_str(), &fs) == 0) {
    const auto block = static_cast<int64_t>(fs.f_frsize);
    t.disk_used_bytes = static_cast<int64_t>(fs.f_blocks - fs.f_bfree) * block;
    t.disk_capacity_bytes = static_cast<int64_t>(fs.f_blocks) * block;
  }
  if (options_.declared_disk_bytes > 0) t.disk_capacity_bytes = options_.declared_disk_bytes;
  return t;
}

net::Client* LoadReporter::ClientFor(cluster::NodeId leader) {
  auto registration = view_.Broker(leader);
  if (!registration || registration->registration.listeners.empty()) return nullptr;
  const cluster::BrokerListener& l = registration->registration.listeners.front();
  auto& client = clients_[leader];
  if (!client || client->host() != l.host || client->port() != l.port) {
    if (client) client->Close();
    net::ClientOptions options;
    options.client_id = "strata-load-reporter";
    options.max_connections = 1;
    client = std::make_unique<net::Client>(io_, l.host, static_cast<uint16_t>(l.port), options);
  }
  return client.get();
}

Status LoadReporter::Publish(const balancer::MetricsSample& sample) {
  auto topic = view_.Topic(balancer::kMetricsTopic);
  if (!topic) return MakeError(Errc::kNotFound, "the topic does not exist yet");
  const int32_t partition = options_.node.value() % std::max(1, topic->record.partitions);
  auto record = view_.Partition(cluster::UuidToBase64(topic->record.id), partition);
  if (!record || record->record.leader.value() < 0) {
    return MakeError(Errc::kUnavailable, "no leader for partition " + std::to_string(partition));
  }
  net::Client* client = ClientFor(record->record.leader);
  if (client == nullptr) return MakeError(Errc::kUnavailable, "the leader is not registered");
  protocol::BatchBuilder batch;
  batch.set_compression(protocol::Compression::kLz4);
  const std::string key = balancer::MetricsRecordKey(sample.broker);
  for (const std::string& value : balancer::EncodeMetricsSample(sample)) {
    batch.Add(key, value, sample.timestamp_ms);
  }
  protocol::ProduceRequest req;
  req.acks = -1;
  req.timeout_ms = 10'000;
  req.topics.push_back({balancer::kMetricsTopic, {}});
  req.topics.back().partitions.emplace_back();
  req.topics.back().partitions.back().index = partition;
  req.topics.back().partitions.back().records.Own(batch.Build());
  // The coroutine answers a Status (a future's value must be default
  // constructible); the produce errors are checked inside.
  auto call = [&]() -> asio::awaitable<Status> {
    auto response = co_await client->Send<protocol::ProduceRequest, protocol::ProduceResponse>(
        req, kProduceVersion);
    if (!response.ok()) co_return response.take_error();
    for (const auto& t : response->topics) {
      for (const auto& p : t.partitions) {
        if (p.error_code != 0) {
          co_return MakeError(Errc::kUnavailable,
                              "produce error code " + std::to_string(p.error_code));
        }
      }
    }
    co_return Status::Ok();
  };
  auto done = asio::co_spawn(io_, call(), asio::use_future);
  if (done.wait_for(std::chrono::seconds(15)) != std::future_status::ready) {
    return MakeError(Errc::kTimeout, "produce timed out");
  }
  return done.get();
}

}  // namespace strata::broker

namespace strata::broker {

Status EnsureMetricsTopic(BrokerContext& ctx) {
  const std::string topic = balancer::kMetricsTopic;
  if (ctx.topics.GetTopicInfo(topic)) return Status::Ok();
  const auto partitions =
      static_cast<int32_t>(ctx.config.GetLong("strata.balancer.metrics.topic.partitions"));
  // Three replicas where three brokers can hold one (fewer on a smaller
  // cluster): the samples are worth little after a few minutes, but a
  // controller change must find them.
  const auto placeable = static_cast<int16_t>(std::max<size_t>(PlacementBrokers(ctx).size(), 1));
  const int16_t rf = std::min<int16_t>(3, placeable);
  STRATA_ASSIGN_OR_RETURN(auto placed, PlaceNewReplicas(ctx, partitions, rf, 0));
  cluster::TopicRecord record;
  record.name = topic;
  record.partitions = partitions;
  record.replication_factor = rf;
  record.internal = true;
  record.configs = {{"cleanup.policy", "delete"},
                    {"retention.ms", ctx.config.Get("strata.balancer.metrics.retention.ms")},
                    {"segment.bytes", std::to_string(16 << 20)},
                    {"min.insync.replicas", "1"}};
  auto created = ctx.topics.CreateTopic(std::move(record), std::move(placed));
  if (!created.ok() && created.error().code != Errc::kAlreadyExists) {
    return created.take_error();
  }
  Log()->info("created {} ({} partitions, {} replicas)", topic, partitions, rf);
  return Status::Ok();
}

}  // namespace strata::broker
