// `strata bench metadata`: cluster metadata at scale against a real etcd,
// with no brokers running. Writes broker registrations and partition records
// through the KvStore backend, then measures a broker's catch-up (a watch
// delivering every change), a controller start (view load, registration,
// election and the Controller's first pass over every partition), and one
// failover: a broker's registration goes and the Controller moves all its
// leaderships, until a watching broker has seen them.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

#include "bench/bench.h"
#include "cluster/broker_session.h"
#include "cluster/controller.h"
#include "cluster/controller_election.h"
#include "cluster/etcd_kv_store.h"
#include "cluster/keys.h"
#include "cluster/metadata.h"
#include "cluster/metadata_view.h"
#include "cluster/records.h"

namespace strata::bench {

namespace {

using Clock = std::chrono::steady_clock;
using namespace strata::cluster;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Polls `done` every 10 ms until it holds or `timeout` passes.
template <class Pred>
bool WaitFor(Pred done, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
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
  std::vector<std::pair<std::string, int32_t>> led_by_first;  // broker 0's leaderships
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
      if (written % o.brokers == 0) led_by_first.emplace_back(id, static_cast<int32_t>(p));
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

  // A controller starting: its broker loads the view (a paged read at one
  // revision), registers, wins the election, and the Controller makes its
  // first pass over every partition.
  auto t1 = Clock::now();
  const NodeId self(o.brokers);  // not one of the simulated brokers
  MetadataOptions mo;
  mo.prefix = o.prefix;
  mo.timeout = std::chrono::milliseconds(120000);
  mo.local_node = self;
  auto md = Metadata::OpenOn(**kv, mo);
  if (!md.ok()) {
    std::fprintf(stderr, "controller's metadata: %s\n", md.error().message.c_str());
    return 1;
  }
  double load_s = Since(t1);
  size_t loaded_partitions = 0;
  for (const auto& id : topic_ids) loaded_partitions += (*md)->view().Partitions(id).size();
  BrokerSessionOptions so;
  so.registration.node_id = self;
  so.registration.listeners = {{"PLAINTEXT", "127.0.0.1", 9092}};
  so.ttl = std::chrono::milliseconds(10000);
  auto session = BrokerSession::Start(**md, so);
  if (!session.ok()) {
    std::fprintf(stderr, "controller's registration: %s\n", session.error().message.c_str());
    return 1;
  }
  auto election = ControllerElection::Start(**md, **session, nullptr);
  auto controller = std::make_unique<Controller>(**md, *election, ControllerOptions{});
  bool started = WaitFor([&] { return controller->passes() >= 1; }, std::chrono::minutes(2));
  double controller_s = Since(t1);

  // One failover through that controller: broker 0's registration goes (as
  // when its lease expires), the controller moves every leadership it held
  // (compare-and-set, 128 records per transaction), until a watching broker
  // sees the last one.
  const int64_t changes_before = controller->leader_changes();
  auto t2 = Clock::now();
  KvOp gone = KvOp::Delete(keys.Broker(NodeId(0)));
  auto deleted = (*kv)->Txn({}, std::span(&gone, 1));
  auto moved_all = [&] {
    for (const auto& [id, p] : led_by_first) {
      auto entry = (*watcher)->Partition(id, p);
      if (!entry || entry->record.leader == NodeId(0)) return false;
    }
    return true;
  };
  bool seen = deleted.ok() && WaitFor(moved_all, std::chrono::minutes(2));
  double failover_s = Since(t2);
  // Every record naming broker 0 changes (it also leaves the ISRs it was in).
  WaitFor([&] { return controller->passes() > 1; }, std::chrono::seconds(30));
  const int64_t records_changed = controller->leader_changes() - changes_before;
  controller.reset();
  election.reset();
  session->reset();

  std::printf("brokers %d, topics %d, partitions %lld\n", o.brokers, o.topics,
              static_cast<long long>(written));
  std::printf("write all records: %.2f s (%.0f records/s)\n", write_s,
              static_cast<double>(written + o.brokers) / write_s);
  std::printf("broker catch-up from its watch: %.2f s after the first write (%s)\n", watch_s,
              caught_up ? "caught up" : "NOT caught up");
  std::printf("controller start: view loaded in %.2f s (%zu partitions); registered, elected and "
              "first pass over every partition done %.2f s after start (%s)\n",
              load_s, loaded_partitions, controller_s, started ? "done" : "NOT done");
  std::printf("failover of broker 0's %zu leaderships by the controller, until a watching broker "
              "sees them all: %.3f s (%s; %lld partition records changed)\n",
              led_by_first.size(), failover_s, seen ? "seen" : "NOT seen",
              static_cast<long long>(records_changed));
  if (!o.json_out.empty()) {
    std::ofstream out(o.json_out);
    out << "{\"brokers\":" << o.brokers << ",\"partitions\":" << written
        << ",\"write_s\":" << write_s << ",\"watch_catch_up_s\":" << watch_s
        << ",\"load_s\":" << load_s << ",\"controller_start_s\":" << controller_s
        << ",\"failover_leaders\":" << led_by_first.size() << ",\"failover_s\":" << failover_s
        << "}\n";
  }
  // Leave etcd as found.
  KvOp clean = KvOp::DeletePrefix(keys.prefix());
  (void)(*kv)->Txn({}, std::span(&clean, 1));
  return caught_up && seen && started ? 0 : 1;
}

}  // namespace strata::bench
