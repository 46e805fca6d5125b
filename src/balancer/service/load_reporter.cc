#include "balancer/service/load_reporter.h"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <chrono>

#include "balancer/service/logger.h"
#include "broker/topic_manager.h"
#include "kafka/cluster_state.h"

namespace strata::balancer {

namespace {

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

LoadReporter::LoadReporter(broker::TopicManager& topics, cluster::MetadataView& view,
                           asio::any_io_executor io, LoadReporterOptions options)
    : topics_(topics),
      view_(view),
      peers_(view, std::move(io), "strata-load-reporter", options.inter_broker_security),
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
      Commit();
      published_->Add();
      continue;
    }
    // Not committed: the next sample covers this window too, so no traffic
    // goes unreported while the topic is missing or its leader away.
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
    broker::PartitionTraffic& t = p->traffic();
    Counters c{t.bytes_in(), t.messages_in(), t.bytes_out(), t.replication_bytes_in(),
               t.replication_bytes_out()};
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
  next_ = std::move(seen);
  s.totals = Totals(seconds, s);
  next_ms_ = now;
  return s;
}

void LoadReporter::Commit() {
  last_ = std::move(next_);
  last_ms_ = next_ms_;
  last_cpu_s_ = next_cpu_s_;
}

balancer::BrokerTotals LoadReporter::Totals(double seconds, const balancer::MetricsSample& s) {
  balancer::BrokerTotals t;
  const double cpu = ProcessCpuSeconds();
  t.cpu_cores_used = std::max(0.0, cpu - last_cpu_s_) / seconds;
  next_cpu_s_ = cpu;
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

Status LoadReporter::Publish(const balancer::MetricsSample& sample) {
  auto topic = view_.Topic(balancer::kMetricsTopic);
  if (!topic) return MakeError(Errc::kNotFound, "the topic does not exist yet");
  const int32_t partition = options_.node.value() % std::max(1, topic->record.partitions);
  const std::string key = balancer::MetricsRecordKey(sample.broker);
  std::vector<std::pair<std::string, std::string>> records;
  for (std::string& value : balancer::EncodeMetricsSample(sample)) {
    records.emplace_back(key, std::move(value));
  }
  return ProduceToLeader(peers_, balancer::kMetricsTopic, partition, records, sample.timestamp_ms,
                         std::chrono::seconds(10));
}

}  // namespace strata::balancer

namespace strata::balancer {

namespace {

// Creates one internal topic of the balancer when missing: up to three
// replicas (fewer on a smaller cluster), delete policy.
Status EnsureTopic(kafka::BrokerContext& ctx, const std::string& topic, int32_t partitions,
                   const std::string& retention_ms) {
  if (ctx.topics.GetTopicInfo(topic)) return Status::Ok();
  const auto placeable =
      static_cast<int16_t>(std::max<size_t>(kafka::PlacementBrokers(ctx).size(), 1));
  const int16_t rf = std::min<int16_t>(3, placeable);
  STRATA_ASSIGN_OR_RETURN(auto placed, kafka::PlaceNewReplicas(ctx, partitions, rf, 0));
  cluster::TopicRecord record;
  record.name = topic;
  record.partitions = partitions;
  record.replication_factor = rf;
  record.internal = true;
  record.configs = {{"cleanup.policy", "delete"},
                    {"retention.ms", retention_ms},
                    {"segment.bytes", std::to_string(16 << 20)},
                    {"min.insync.replicas", "1"}};
  auto created = ctx.topics.CreateTopic(std::move(record), std::move(placed));
  if (!created.ok() && created.error().code != Errc::kAlreadyExists) {
    return created.take_error();
  }
  Log()->info("created {} ({} partitions, {} replicas)", topic, partitions, rf);
  return Status::Ok();
}

}  // namespace

Status EnsureBalancerTopics(kafka::BrokerContext& ctx) {
  STRATA_RETURN_IF_ERROR(EnsureTopic(
      ctx, balancer::kMetricsTopic,
      static_cast<int32_t>(ctx.config.GetLong("strata.balancer.metrics.topic.partitions")),
      ctx.config.Get("strata.balancer.metrics.retention.ms")));
  return EnsureTopic(ctx, balancer::kBalancerLogTopic, 1,
                     ctx.config.Get("strata.balancer.log.retention.ms"));
}

}  // namespace strata::balancer
