#include "admin/routes.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

#include "admin/cluster.h"
#include "admin/console.h"
#include "admin/groups.h"
#include "base/metrics.h"
#include "cluster/broker_session.h"
#include "cluster/controller.h"
#include "storage/cleaner.h"

namespace strata::admin {

namespace {

using nlohmann::json;

// Resident set size in bytes, from /proc/self/statm.
double ProcessRssBytes() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

// User + system CPU seconds, from /proc/self/stat fields 14 and 15.
double ProcessCpuSeconds() {
  std::ifstream stat("/proc/self/stat");
  std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t close = content.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(content.substr(close + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::vector<int32_t> IdValues(const std::vector<cluster::NodeId>& ids) {
  std::vector<int32_t> out;
  for (cluster::NodeId id : ids) out.push_back(id.value());
  return out;
}

// This broker's replica of a partition: its local log, and the partition's
// record (leader, ISR, replicas not contiguous with remote storage, a
// reassignment in progress) and shared remote log offsets.
json PartitionJson(kafka::BrokerContext& ctx, const broker::Partition& partition,
                   const std::string& topic_id) {
  const auto& log = partition.log();
  cluster::PartitionRecord state = partition.state();
  json out{{"partition", partition.tp().partition},
           {"log_start_offset", log->log_start_offset().value()},
           {"log_end_offset", log->log_end_offset().value()},
           {"high_watermark", partition.high_watermark().value()},
           {"last_stable_offset", partition.last_stable_offset().value()},
           {"size_bytes", log->size_bytes()},
           {"segments", log->segment_count()},
           {"leader", state.leader.value()},
           {"leader_epoch", state.leader_epoch.value()},
           {"replicas", IdValues(state.replicas)},
           {"isr", IdValues(state.isr)},
           {"elr", IdValues(state.elr)},
           {"non_contiguous", IdValues(state.non_contiguous)},
           {"adding", IdValues(state.adding)},
           {"removing", IdValues(state.removing)}};
  json open = json::array();  // the producers' open transactions, by first offset
  for (const storage::ProducerView& v : log->ActiveProducers()) {
    if (v.current_txn_start_offset >= 0_o) {
      open.push_back({{"producer_id", v.producer_id},
                      {"producer_epoch", v.producer_epoch},
                      {"first_offset", v.current_txn_start_offset.value()}});
    }
  }
  out["open_transactions"] = std::move(open);
  if (auto remote = ctx.store.GetRemoteLogOffsets(topic_id, partition.tp().partition)) {
    out["remote_log_start_offset"] = remote->start;
    out["remote_log_end_offset"] = remote->end;
  }
  return out;
}

// The reassignments of partitions this broker leads, with each added
// replica's copy (ReassignmentProgress).
json ReassignmentsJson(kafka::BrokerContext& ctx) {
  json out = json::array();
  for (const auto& c : ctx.topics.ReassignmentCopies()) {
    out.push_back({{"topic", c.tp.topic},
                   {"partition", c.tp.partition},
                   {"target_replicas", IdValues(c.target)},
                   {"replica", c.replica.value()},
                   {"start_offset", c.start_offset.value()},
                   {"copied_offset", c.copied_offset.value()},
                   {"leader_end_offset", c.leader_end_offset.value()},
                   {"bytes_total", c.bytes_total},
                   {"bytes_copied", c.bytes_copied},
                   {"bytes_per_second", static_cast<int64_t>(c.bytes_per_second)},
                   {"eta_seconds", c.eta_seconds},
                   {"in_isr", c.in_isr},
                   {"contiguous_with_remote", c.contiguous}});
  }
  return out;
}

json TopicsJson(kafka::BrokerContext& ctx) {
  json topics = json::array();
  for (const auto& record : ctx.topics.ListTopics()) {
    json t{{"name", record.name},
           {"id", cluster::UuidToBase64(record.id)},
           {"internal", record.internal},
           {"configs", record.configs},
           {"partitions", json::array()}};
    for (int32_t p = 0; p < record.partitions; ++p) {
      auto partition = ctx.topics.GetPartition({record.name, p});
      if (!partition) continue;
      t["partitions"].push_back(PartitionJson(ctx, *partition, cluster::UuidToBase64(record.id)));
    }
    topics.push_back(std::move(t));
  }
  return topics;
}

// Labels and log of every local partition, cached briefly so one scrape lists
// the topics once rather than once per family. Thread-safe.
class PartitionSnapshot {
 public:
  using Entries = std::vector<std::pair<metrics::Labels, std::shared_ptr<storage::Log>>>;

  std::shared_ptr<const Entries> Get(kafka::BrokerContext& ctx) {
    std::lock_guard lock(mu_);
    auto now = std::chrono::steady_clock::now();
    if (entries_ && now - built_ < std::chrono::seconds(1)) return entries_;
    auto fresh = std::make_shared<Entries>();
    for (const auto& record : ctx.topics.ListTopics()) {
      for (int32_t p = 0; p < record.partitions; ++p) {
        if (auto log = ctx.topics.GetLog({record.name, p})) {
          fresh->push_back({{{"topic", record.name}, {"partition", std::to_string(p)}}, log});
        }
      }
    }
    entries_ = std::move(fresh);
    built_ = now;
    return entries_;
  }

 private:
  std::mutex mu_;
  std::shared_ptr<const Entries> entries_;
  std::chrono::steady_clock::time_point built_;
};

}  // namespace

void RegisterBrokerGauges(kafka::BrokerContext& ctx) {
  auto& registry = metrics::Global();
  registry.SetGauge("process_resident_memory_bytes", "Resident memory", {}, ProcessRssBytes);
  registry.SetCounterFunc("process_cpu_seconds_total", "User and system CPU time", {},
                          ProcessCpuSeconds);
  // The four per-partition families of one scrape share one walk over the
  // topics (rebuilt when older than a second).
  auto partitions = std::make_shared<PartitionSnapshot>();
  auto per_partition = [&ctx, partitions](auto value) {
    return [&ctx, partitions, value] {
      std::vector<std::pair<metrics::Labels, double>> out;
      auto entries = partitions->Get(ctx);  // keeps the snapshot alive for the loop
      for (const auto& [labels, log] : *entries) {
        out.push_back({labels, static_cast<double>(value(*log))});
      }
      return out;
    };
  };
  registry.SetGaugeFamily("strata_log_cleaner", "Log cleaner counters (by stat)", [&ctx] {
    std::vector<std::pair<metrics::Labels, double>> out;
    const storage::LogCleaner* cleaner = ctx.topics.cleaner();
    if (cleaner == nullptr) return out;
    storage::CleanerStats s = cleaner->stats();
    auto add = [&out](const char* stat, double v) { out.push_back({{{"stat", stat}}, v}); };
    add("passes", static_cast<double>(s.passes));
    add("segments_cleaned", static_cast<double>(s.segments_cleaned));
    add("bytes_read", static_cast<double>(s.bytes_read + s.map_bytes_read));
    add("bytes_written", static_cast<double>(s.bytes_written));
    add("records_read", static_cast<double>(s.records_read));
    add("records_retained", static_cast<double>(s.records_retained));
    add("errors", static_cast<double>(s.errors));
    add("last_clean_duration_ms", static_cast<double>(s.last_clean_duration_ms));
    add("max_dirty_ratio", s.max_dirty_ratio);
    add("uncleanable_logs", static_cast<double>(s.uncleanable_logs));
    return out;
  });
  auto replication = [&ctx](int64_t broker::TopicManager::ReplicationStats::*field) {
    return [&ctx, field] { return static_cast<double>(ctx.topics.replication_stats().*field); };
  };
  using RS = broker::TopicManager::ReplicationStats;
  registry.SetGauge("strata_under_replicated_partitions",
                    "Partitions led here whose ISR lacks a replica", {},
                    replication(&RS::under_replicated));
  registry.SetGauge("strata_under_min_isr_partitions",
                    "Partitions led here whose ISR is below min.insync.replicas", {},
                    replication(&RS::under_min_isr));
  registry.SetGauge("strata_non_contiguous_partitions",
                    "Partitions led here with a replica whose local log does not join up with "
                    "remote storage (it may not join the ISR or lead until uploads cover the gap)",
                    {}, replication(&RS::non_contiguous));
  registry.SetGauge("strata_reassigning_partitions",
                    "Partitions led here that a reassignment is adding replicas to", {}, [&ctx] {
                      std::unordered_set<TopicPartition, TopicPartitionHash> tps;
                      for (const auto& c : ctx.topics.ReassignmentCopies()) tps.insert(c.tp);
                      return static_cast<double>(tps.size());
                    });
  registry.SetGauge("strata_reassignment_bytes_left",
                    "Bytes the replicas being added to partitions led here still have to copy", {},
                    [&ctx] {
                      int64_t left = 0;
                      for (const auto& c : ctx.topics.ReassignmentCopies())
                        left += std::max<int64_t>(0, c.bytes_total - c.bytes_copied);
                      return static_cast<double>(left);
                    });
  registry.SetGauge("strata_followed_partitions", "Partitions this broker follows", {},
                    replication(&RS::followed));
  // Kafka's controller metrics: non-zero only on the active controller.
  registry.SetGauge("strata_active_controller", "1 on the active controller, else 0", {}, [&ctx] {
    return ctx.controller != nullptr && ctx.controller->active() ? 1.0 : 0.0;
  });
  registry.SetGauge(
      "strata_offline_partitions",
      "Partitions without a live leader (reported by the active controller, 0 elsewhere)", {},
      [&ctx] {
        if (ctx.controller == nullptr || !ctx.controller->active()) return 0.0;
        return static_cast<double>(ctx.controller->OfflinePartitions());
      });
  registry.SetGauge("strata_replica_fetcher_max_lag",
                    "Offsets the most-behind partition followed here lacks of its leader's high "
                    "watermark (Kafka's replica fetcher MaxLag)",
                    {}, replication(&RS::max_follower_lag));
  registry.SetGaugeFamily(
      "strata_replica_fetcher_lag",
      "Offsets a partition followed here lacks of its leader's high watermark", [&ctx] {
        std::vector<std::pair<metrics::Labels, double>> out;
        for (const auto& [tp, lag] : ctx.topics.FollowerLags()) {
          out.push_back({{{"topic", tp.topic}, {"partition", std::to_string(tp.partition)}},
                         static_cast<double>(lag)});
        }
        return out;
      });
  registry.SetGaugeFamily(
      "strata_last_stable_offset_lag",
      "Partitions led here whose read_committed consumers are held back by an undecided "
      "transaction: the high watermark minus the last stable offset (Kafka's "
      "LastStableOffsetLag); partitions without one are left out",
      [&ctx] {
        std::vector<std::pair<metrics::Labels, double>> out;
        for (const auto& p : ctx.topics.LocalPartitions()) {
          if (p->leader() != ctx.topics.self()) continue;
          const int64_t lag = p->high_watermark() - p->last_stable_offset();
          if (lag <= 0) continue;
          out.push_back(
              {{{"topic", p->tp().topic}, {"partition", std::to_string(p->tp().partition)}},
               static_cast<double>(lag)});
        }
        return out;
      });
  registry.SetGaugeFamily(
      "strata_follower_lag_seconds",
      "Leader: how long a follower has not been caught up with this partition (its ISR "
      "membership ends after replica.lag.time.max.ms)",
      [&ctx] {
        std::vector<std::pair<metrics::Labels, double>> out;
        for (const auto& f : ctx.topics.FollowerTimeLags()) {
          out.push_back({{{"topic", f.tp.topic},
                          {"partition", std::to_string(f.tp.partition)},
                          {"replica", std::to_string(f.replica.value())}},
                         static_cast<double>(f.lag_ms) / 1000.0});
        }
        return out;
      });
  registry.SetGaugeFamily(
      "strata_log_end_offset", "Next offset to be written",
      per_partition([](const storage::Log& l) { return l.log_end_offset().value(); }));
  registry.SetGaugeFamily(
      "strata_log_start_offset", "First offset kept",
      per_partition([](const storage::Log& l) { return l.log_start_offset().value(); }));
  registry.SetGaugeFamily("strata_log_size_bytes", "Bytes on local disk",
                          per_partition([](const storage::Log& l) { return l.size_bytes(); }));
  registry.SetGaugeFamily("strata_log_segments", "Local segments",
                          per_partition([](const storage::Log& l) { return l.segment_count(); }));
  RegisterTransactionGauges(ctx);
}

void RegisterSessionGauges(cluster::BrokerSession& session) {
  cluster::BrokerSession* s = &session;
  auto& r = metrics::Global();
  r.SetGauge("strata_metadata_lease_age_seconds",
             "time since this broker's etcd lease was last renewed (it is fenced after "
             "strata.etcd.lease.ttl.ms)",
             {}, [s] { return static_cast<double>(s->lease_age_ms()) / 1000.0; });
  r.SetCounterFunc("strata_metadata_lease_renewals_total", "etcd lease renewals", {},
                   [s] { return static_cast<double>(s->renewals()); });
  r.SetGauge("strata_metadata_fenced",
             "1 while this broker cannot renew its lease and acts as neither leader nor "
             "controller",
             {}, [s] { return s->fenced() ? 1.0 : 0.0; });
  r.SetGauge("strata_metadata_watch_lag_seconds",
             "how long the metadata view has been behind a revision etcd was seen at (0 while "
             "the watch keeps up)",
             {}, [s] { return static_cast<double>(s->watch_lag_ms()) / 1000.0; });
}

void RegisterAdminRoutes(HttpServer& server, AdminContext& admin) {
  kafka::BrokerContext& ctx = admin.broker;
  server.Route("/metrics", [](const std::string&) {
    return admin::HttpResponse{200, "text/plain; version=0.0.4",
                               metrics::Global().RenderPrometheus()};
  });
  RegisterBalancerRoutes(server, admin);
  RegisterTransactionRoutes(server, admin);
  RegisterRemoteRoutes(server, admin);
  server.Route("/v1/cluster", [&admin](const std::string&) {
    return HttpResponse{200, "application/json", ClusterJson(admin).dump(2) + "\n"};
  });
  server.Route("/v1/topics", [&ctx](const std::string&) {
    return admin::HttpResponse{200, "application/json", TopicsJson(ctx).dump(2) + "\n"};
  });
  server.Route("/v1/reassignments", [&ctx](const std::string&) {
    return admin::HttpResponse{200, "application/json", ReassignmentsJson(ctx).dump(2) + "\n"};
  });
  server.Route("/v1/groups", [&ctx](const std::string&) {
    return admin::HttpResponse{200, "application/json", GroupsJson(ctx).dump(2) + "\n"};
  });
  // The web console: one page, from the binary, that reads the routes above.
  for (const char* path : {"/", "/console"}) {
    server.Route(path, [](const std::string&) {
      return admin::HttpResponse{200, "text/html; charset=utf-8", std::string(ConsoleHtml())};
    });
  }
}

}  // namespace strata::admin
