// `strata bench metadata`: cluster metadata at scale against a real etcd,
// with no brokers running. Writes broker registrations and partition records
// through the KvStore backend, then measures what a controller start and a
// broker's catch-up cost (a paged load at one revision; a watch delivering
// every change), and one failover's worth of leader changes reaching a
// watching broker.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>

#include "bench/bench.h"
#include "cluster/etcd_kv_store.h"
#include "cluster/keys.h"
#include "cluster/metadata_view.h"
#include "cluster/records.h"

namespace strata::bench {

namespace {

using Clock = std::chrono::steady_clock;
using namespace strata::cluster;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

PartitionRecord Placed(int32_t brokers, int64_t n, int32_t leader_shift) {
  PartitionRecord r;
  for (int i = 0; i < 3; ++i) r.replicas.emplace_back(static_cast<int32_t>((n + i) % brokers));
  r.isr = r.replicas;
  r.leader = r.replicas[static_cast<size_t>(leader_shift % 3)];
  r.leader_epoch = LeaderEpoch(leader_shift);
  r.partition_epoch = PartitionEpoch(leader_shift);
  return r;
}

}  // namespace

int RunMetadataScale(const MetadataScaleOptions& o) {
  auto endpoints = ParseEtcdEndpoints(o.etcd);
  if (!endpoints.ok()) {
    std::fprintf(stderr, "%s\n", endpoints.error().message.c_str());
    return 2;
  }
  auto kv = OpenEtcdKvStore({*endpoints, std::chrono::milliseconds(30000)});
  if (!kv.ok()) {
    std::fprintf(stderr, "%s\n", kv.error().message.c_str());
    return 2;
  }
  KeyLayout keys(o.prefix);
  const int64_t per_topic = std::max<int64_t>(1, o.partitions / std::max<int32_t>(1, o.topics));

  // A broker that watches from the start: its catch-up is measured below.
  auto watcher = MetadataView::Open(**kv, keys, std::chrono::milliseconds(30000));
  if (!watcher.ok()) {
    std::fprintf(stderr, "%s\n", watcher.error().message.c_str());
    return 1;
  }
  auto t0 = Clock::now();
  std::vector<KvOp> ops;
  for (int32_t b = 0; b < o.brokers; ++b) {
    BrokerRegistration reg;
    reg.node_id = NodeId(b);
    reg.listeners = {
        {"PLAINTEXT", "10.0." + std::to_string(b / 250) + "." + std::to_string(b % 250), 9092}};
    reg.rack = "rack-" + std::to_string(b % 3);
    ops.push_back(KvOp::Put(keys.Broker(NodeId(b)), EncodeBroker(reg)));
  }
  std::vector<std::string> topic_ids;
  int64_t written = 0;
  for (int32_t t = 0; t < o.topics && written < o.partitions; ++t) {
    TopicRecord topic;
    topic.name = "scale-" + std::to_string(t);
    topic.id = RandomTopicId();
    topic.partitions = static_cast<int32_t>(per_topic);
    topic.replication_factor = 3;
    std::string id = UuidToBase64(topic.id);
    topic_ids.push_back(id);
    for (int64_t p = 0; p < per_topic; ++p, ++written) {
      ops.push_back(KvOp::Put(keys.Partition(id, static_cast<int32_t>(p)),
                              EncodePartition(Placed(o.brokers, written, 0))));
    }
    ops.push_back(KvOp::Put(keys.Topic(topic.name), EncodeTopic(topic)));
    if (ops.size() >= 100000) {
      auto r = WriteInBatches(**kv, {}, ops);
      if (!r.ok()) {
        std::fprintf(stderr, "write: %s\n", r.error().message.c_str());
        return 1;
      }
      ops.clear();
      std::fprintf(stderr, "\rwritten %lld partition records", static_cast<long long>(written));
    }
  }
  auto last = WriteInBatches(**kv, {}, ops);
  if (!last.ok()) {
    std::fprintf(stderr, "write: %s\n", last.error().message.c_str());
    return 1;
  }
  double write_s = Since(t0);
  std::fprintf(stderr, "\n");
  bool caught_up = (*watcher)->WaitForRevision(last->revision, std::chrono::minutes(10));
  double watch_s = Since(t0);

  // A controller (or restarted broker) starting: a paged load at one revision.
  auto t1 = Clock::now();
  auto loaded = MetadataView::Open(**kv, keys, std::chrono::milliseconds(60000));
  double load_s = Since(t1);
  size_t loaded_partitions = 0;
  if (loaded.ok()) {
    for (const auto& id : topic_ids) loaded_partitions += (*loaded)->Partitions(id).size();
  }

  // One failover: a broker's 1,000 leaderships move, in transactions of 128
  // CAS writes (as a controller writes them); time until a broker sees all.
  std::vector<KvOp> moves;
  std::vector<KvCompare> guards;
  for (int64_t i = 0; i < o.failover_leaders; ++i) {
    const std::string& id = topic_ids[static_cast<size_t>(i) % topic_ids.size()];
    int32_t p = static_cast<int32_t>(i / static_cast<int64_t>(topic_ids.size()));
    moves.push_back(KvOp::Put(keys.Partition(id, p), EncodePartition(Placed(o.brokers, i, 1))));
  }
  auto t2 = Clock::now();
  auto moved = WriteInBatches(**kv, guards, moves);
  bool seen = moved.ok() && (*watcher)->WaitForRevision(moved->revision, std::chrono::minutes(1));
  double failover_s = Since(t2);

  std::printf("brokers %d, topics %d, partitions %lld\n", o.brokers, o.topics,
              static_cast<long long>(written));
  std::printf("write all records: %.2f s (%.0f records/s)\n", write_s,
              static_cast<double>(written + o.brokers) / write_s);
  std::printf("broker catch-up from its watch: %.2f s after the first write (%s)\n", watch_s,
              caught_up ? "caught up" : "NOT caught up");
  std::printf("controller start (paged load at one revision): %.2f s, %zu partitions\n", load_s,
              loaded_partitions);
  std::printf("failover of %lld leaders (write + seen by a watching broker): %.3f s (%s)\n",
              static_cast<long long>(o.failover_leaders), failover_s, seen ? "seen" : "NOT seen");
  if (!o.json_out.empty()) {
    std::ofstream out(o.json_out);
    out << "{\"brokers\":" << o.brokers << ",\"partitions\":" << written
        << ",\"write_s\":" << write_s << ",\"watch_catch_up_s\":" << watch_s
        << ",\"load_s\":" << load_s << ",\"failover_leaders\":" << o.failover_leaders
        << ",\"failover_s\":" << failover_s << "}\n";
  }
  // Leave etcd as found.
  KvOp clean = KvOp::DeletePrefix(keys.prefix());
  (void)(*kv)->Txn({}, std::span(&clean, 1));
  return caught_up && seen && loaded.ok() ? 0 : 1;
}

}  // namespace strata::bench
