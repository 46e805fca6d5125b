// etcd-only behaviour of EtcdKvStore: member failure, restarts, outages.
#include "cluster/etcd_kv_store.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "base/log.h"
#include "cluster/etcd_test_util.h"
#include "cluster/metadata.h"

namespace strata::cluster {
namespace {

using namespace std::chrono_literals;

Result<TxnResult> Put(KvStore& s, const std::string& k, const std::string& v) {
  KvOp op = KvOp::Put(k, v);
  return s.Txn({}, std::span<const KvOp>(&op, 1));
}

// Retries a write until it succeeds or `timeout` passes (etcd elects a new
// leader in about the election timeout, 500 ms in the fixture).
Result<TxnResult> PutEventually(KvStore& s, const std::string& k, const std::string& v,
                                std::chrono::milliseconds timeout = 15s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto r = Put(s, k, v);
    if (r.ok() || std::chrono::steady_clock::now() > deadline) return r;
    std::this_thread::sleep_for(100ms);
  }
}

struct Seen {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<WatchEvent> events;
  WatchCallback Callback() {
    return [this](const WatchBatch& b) {
      std::lock_guard lock(mu);
      for (const auto& e : b.events) events.push_back(e);
      cv.notify_all();
    };
  }
  bool WaitCount(size_t n, std::chrono::milliseconds timeout = 20s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return events.size() >= n; });
  }
};

TEST(EtcdKvStore, ParsesEndpoints) {
  auto eps = ParseEtcdEndpoints(" http://127.0.0.1:2379, localhost:2380 ,").value();
  ASSERT_EQ(eps.size(), 2u);
  EXPECT_EQ(eps[0], "127.0.0.1:2379");
  EXPECT_EQ(eps[1], "localhost:2380");
  EXPECT_FALSE(ParseEtcdEndpoints("").ok());
  EXPECT_FALSE(ParseEtcdEndpoints("127.0.0.1").ok());
  EXPECT_FALSE(OpenEtcdKvStore({{"no-such-host.invalid:2379"}}).ok());
}

TEST(EtcdKvStore, UnreachableIsRetriableUnavailable) {
  int port = testing::FreePort();  // nothing listens there
  auto store = OpenEtcdKvStore({{"127.0.0.1:" + std::to_string(port)}, 500ms}).value();
  auto r = store->Get("/x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::kUnavailable) << r.error().message;
  EXPECT_NE(r.error().message.find("127.0.0.1:" + std::to_string(port)), std::string::npos);
}

TEST(EtcdKvStore, WatchResumesAcrossAnEtcdRestartWithoutGaps) {
  log::SetLevel(getenv("STRATA_TEST_DEBUG") ? "debug" : "info");
  testing::EtcdCluster etcd(1);
  auto store = OpenEtcdKvStore({etcd.endpoints(), 2000ms}).value();
  Seen seen;
  auto watch = store->Watch("/w/", 0, seen.Callback()).value();
  ASSERT_TRUE(Put(*store, "/w/1", "a").ok());
  ASSERT_TRUE(seen.WaitCount(1)) << etcd.Logs();
  etcd.Stop(0);
  EXPECT_FALSE(Put(*store, "/w/lost", "x").ok());  // down: a clear failure
  etcd.Start(0);
  etcd.WaitHealthy();
  // Written through another client before the watcher reconnects: the watch
  // must replay them from its last revision + 1, in order.
  auto other = OpenEtcdKvStore({etcd.endpoints(), 2000ms}).value();
  for (int i = 2; i <= 5; ++i)
    ASSERT_TRUE(PutEventually(*other, "/w/" + std::to_string(i), "b").ok());
  ASSERT_TRUE(seen.WaitCount(5)) << "events: " << seen.events.size();
  std::lock_guard lock(seen.mu);
  ASSERT_EQ(seen.events.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(seen.events[i].kv.key, "/w/" + std::to_string(i + 1));
}

TEST(EtcdKvStore, ThreeMembersSurviveOneKilled) {
  testing::EtcdCluster etcd(3);
  auto store = OpenEtcdKvStore({etcd.endpoints(), 2000ms}).value();
  Seen seen;
  auto watch = store->Watch("/m/", 0, seen.Callback()).value();
  ASSERT_TRUE(Put(*store, "/m/0", "v").ok());
  ASSERT_TRUE(seen.WaitCount(1));
  // Kill members one at a time (each restarted before the next): whichever
  // held the leadership or our connection, writes and the watch go on.
  for (int victim = 0; victim < 3; ++victim) {
    etcd.Stop(victim, /*kill=*/true);
    std::string key = "/m/" + std::to_string(victim + 1);
    auto r = PutEventually(*store, key, "v");
    ASSERT_TRUE(r.ok()) << "member " << victim << " killed: " << r.error().message << etcd.Logs();
    ASSERT_TRUE(seen.WaitCount(static_cast<size_t>(victim) + 2)) << etcd.Logs();
    etcd.Start(victim);
    etcd.WaitHealthy();
  }
  EXPECT_EQ(store->GetPrefix("/m/").value().kvs.size(), 4u);
}

// etcd past --quota-backend-bytes raises its NOSPACE alarm and refuses every
// write until an operator frees space and disarms it. The store says so in
// words (and is kUnavailable, which the broker answers with retriable Kafka
// errors); reads, and the metadata view, go on.
TEST(EtcdKvStore, NoSpaceAlarmIsAClearRetriableError) {
  testing::EtcdCluster etcd(1, {"--quota-backend-bytes", std::to_string(256 * 1024)});
  auto store = OpenEtcdKvStore({etcd.endpoints(), 2000ms}).value();
  MetadataOptions options;
  options.local_node = NodeId(1);
  options.timeout = 5000ms;
  auto metadata = Metadata::OpenOn(*store, options).value();
  ASSERT_TRUE(metadata->CreateTopic({.name = "before", .partitions = 2}).ok());

  const std::string big(60 * 1024, 'x');
  std::optional<Error> refused;
  int written = 0;
  // etcd checks the quota against its database file, which grows when a
  // batch commits (every 100 ms): keep writing until it has, within bounds.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  for (int i = 0; i < 2000 && !refused && std::chrono::steady_clock::now() < deadline; ++i) {
    auto r = Put(*store, "/fill/" + std::to_string(i), big);
    if (r.ok()) {
      ++written;
    } else {
      refused = r.error();
    }
  }
  ASSERT_TRUE(refused) << "etcd took " << written << " x 60 KiB under a 256 KiB quota";
  EXPECT_GT(written, 0);
  auto expect_no_space = [](const Error& e) {
    EXPECT_EQ(e.code, Errc::kUnavailable) << e.message;
    EXPECT_NE(e.message.find("database space exceeded"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("NOSPACE alarm"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("--quota-backend-bytes"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("etcdctl alarm disarm"), std::string::npos) << e.message;
  };
  expect_no_space(*refused);

  // The alarm refuses even a tiny write, and topic creation through Metadata.
  auto tiny = Put(*store, "/tiny", "1");
  ASSERT_FALSE(tiny.ok());
  expect_no_space(tiny.error());
  auto topic = metadata->CreateTopic({.name = "after", .partitions = 1});
  ASSERT_FALSE(topic.ok());
  expect_no_space(topic.error());
  EXPECT_FALSE(metadata->GetTopic("after"));

  // Reads still work.
  auto got = store->Get("/fill/0");
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->kvs.size(), 1u);
  EXPECT_EQ(got->kvs[0].value.size(), big.size());
  auto before = metadata->GetTopic("before");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->partitions, 2);
}

}  // namespace
}  // namespace strata::cluster
