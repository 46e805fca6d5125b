// The KvStore contract, run against both backends: the embedded store and a
// real etcd process. What passes here for one passes for the other, so code
// above KvStore behaves the same on a single broker and in a cluster.
#include "cluster/kv_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cluster/embedded_kv_store.h"
#include "cluster/etcd_kv_store.h"
#include "cluster/etcd_test_util.h"

namespace strata::cluster {
namespace {

using namespace std::chrono_literals;

// Collects watch batches and lets the test wait for a condition on them.
class WatchLog {
 public:
  WatchCallback Callback() {
    return [this](const WatchBatch& b) {
      std::lock_guard lock(mu_);
      batches_.push_back(b);
      for (const auto& e : b.events) events_.push_back(e);
      cv_.notify_all();
    };
  }
  // Waits until `pred(events, batches)` holds; fails the test with what was
  // seen if it does not within `timeout`.
  template <typename Pred>
  bool WaitFor(Pred pred, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mu_);
    bool ok = cv_.wait_for(lock, timeout, [&] { return pred(events_, batches_); });
    if (!ok) {
      std::string seen;
      for (const auto& e : events_) {
        seen += (e.type == WatchEvent::Type::kPut ? " put " : " del ") + e.kv.key + "@" +
                std::to_string(e.kv.mod_revision);
      }
      ADD_FAILURE() << "watch condition not met; events seen:" << seen
                    << "; batches: " << batches_.size();
    }
    return ok;
  }
  std::vector<WatchEvent> events() {
    std::lock_guard lock(mu_);
    return events_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<WatchEvent> events_;
  std::vector<WatchBatch> batches_;
};

Result<TxnResult> Put(KvStore& s, const std::string& k, const std::string& v, LeaseId lease = 0) {
  KvOp op = KvOp::Put(k, v, lease);
  return s.Txn({}, std::span<const KvOp>(&op, 1));
}

Result<TxnResult> CasPut(KvStore& s, const std::string& k, const std::string& v, Revision expect) {
  KvCompare c = KvCompare::ModRevisionIs(k, expect);
  KvOp op = KvOp::Put(k, v);
  return s.Txn(std::span<const KvCompare>(&c, 1), std::span<const KvOp>(&op, 1));
}

class KvStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("strata-kv-" + std::to_string(::getpid()) + "-" +
            std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::remove_all(dir_);
    if (GetParam() == "etcd") {
      etcd_ = std::make_unique<testing::EtcdCluster>(1);
      store_ = OpenEtcdKvStore({etcd_->endpoints(), 3000ms}).value();
    } else {
      store_ = EmbeddedKvStore::Open(dir_).value();
    }
    // Each test works under its own prefix (etcd's revision is store-wide).
    p_ = "/t/";
  }
  void TearDown() override {
    store_.reset();
    etcd_.reset();
    std::filesystem::remove_all(dir_);
  }
  KvStore& s() { return *store_; }

  std::filesystem::path dir_;
  std::unique_ptr<testing::EtcdCluster> etcd_;
  std::unique_ptr<KvStore> store_;
  std::string p_;
};

TEST_P(KvStoreTest, RevisionsOfPutsAndDeletes) {
  auto r1 = Put(s(), p_ + "a", "1").value();
  ASSERT_TRUE(r1.succeeded);
  auto got = s().Get(p_ + "a").value();
  ASSERT_EQ(got.kvs.size(), 1u);
  EXPECT_EQ(got.kvs[0].value, "1");
  EXPECT_EQ(got.kvs[0].create_revision, r1.revision);
  EXPECT_EQ(got.kvs[0].mod_revision, r1.revision);
  EXPECT_EQ(got.kvs[0].version, 1);
  auto r2 = Put(s(), p_ + "a", "2").value();
  EXPECT_EQ(r2.revision, r1.revision + 1);
  got = s().Get(p_ + "a").value();
  EXPECT_EQ(got.kvs[0].create_revision, r1.revision);
  EXPECT_EQ(got.kvs[0].mod_revision, r2.revision);
  EXPECT_EQ(got.kvs[0].version, 2);
  KvOp del = KvOp::Delete(p_ + "a");
  auto r3 = s().Txn({}, std::span<const KvOp>(&del, 1)).value();
  EXPECT_EQ(r3.revision, r2.revision + 1);
  EXPECT_TRUE(s().Get(p_ + "a").value().kvs.empty());
  // Deleting what is not there changes nothing and takes no revision.
  EXPECT_EQ(s().Txn({}, std::span<const KvOp>(&del, 1)).value().revision, r3.revision);
  // A transaction whose compares fail writes nothing and keeps the revision.
  auto failed = CasPut(s(), p_ + "a", "x", 12345).value();
  EXPECT_FALSE(failed.succeeded);
  EXPECT_EQ(failed.revision, r3.revision);
}

TEST_P(KvStoreTest, CompareAndSetConflict) {
  Revision created = Put(s(), p_ + "k", "v0").value().revision;
  // Two writers read the same revision; only the first CAS lands.
  auto first = CasPut(s(), p_ + "k", "writer1", created).value();
  auto second = CasPut(s(), p_ + "k", "writer2", created).value();
  EXPECT_TRUE(first.succeeded);
  EXPECT_FALSE(second.succeeded);
  EXPECT_EQ(s().Get(p_ + "k").value().kvs[0].value, "writer1");
  // Create-if-absent.
  KvCompare absent = KvCompare::Absent(p_ + "new");
  KvOp put = KvOp::Put(p_ + "new", "1");
  EXPECT_TRUE(s().Txn(std::span(&absent, 1), std::span(&put, 1)).value().succeeded);
  EXPECT_FALSE(s().Txn(std::span(&absent, 1), std::span(&put, 1)).value().succeeded);
  // Many racing CAS increments: none lost, none doubled.
  ASSERT_TRUE(Put(s(), p_ + "ctr", "0").value().succeeded);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int done = 0; done < 10;) {
        auto kv = s().Get(p_ + "ctr").value().kvs.at(0);
        std::string next = std::to_string(std::stoi(kv.value) + 1);
        if (CasPut(s(), p_ + "ctr", next, kv.mod_revision).value().succeeded) ++done;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(s().Get(p_ + "ctr").value().kvs[0].value, "40");
}

TEST_P(KvStoreTest, PrefixReadsWithLimitAndPastRevision) {
  Revision before = 0;
  for (int i = 0; i < 5; ++i)
    before = Put(s(), p_ + "r/" + std::to_string(i), "old").value().revision;
  Put(s(), p_ + "other", "x").value();
  ASSERT_TRUE(Put(s(), p_ + "r/2", "new").value().succeeded);
  KvOp del = KvOp::Delete(p_ + "r/4");
  ASSERT_TRUE(s().Txn({}, std::span(&del, 1)).value().succeeded);

  auto all = s().GetPrefix(p_ + "r/").value();
  ASSERT_EQ(all.kvs.size(), 4u);
  EXPECT_EQ(all.kvs[2].value, "new");
  auto page = s().GetPrefix(p_ + "r/", 0, 2).value();
  EXPECT_EQ(page.kvs.size(), 2u);
  EXPECT_TRUE(page.more);
  // As of `before`: five keys, all old.
  auto past = s().GetPrefix(p_ + "r/", before).value();
  ASSERT_EQ(past.kvs.size(), 5u);
  for (const auto& kv : past.kvs) EXPECT_EQ(kv.value, "old") << kv.key;
  // Deleting a prefix removes exactly the keys under it.
  KvOp dp = KvOp::DeletePrefix(p_ + "r/");
  ASSERT_TRUE(s().Txn({}, std::span(&dp, 1)).value().succeeded);
  EXPECT_TRUE(s().GetPrefix(p_ + "r/").value().kvs.empty());
  EXPECT_EQ(s().Get(p_ + "other").value().kvs.size(), 1u);
}

TEST_P(KvStoreTest, LimitsAndBatchSplitting) {
  std::vector<KvOp> ops;
  for (int i = 0; i < 300; ++i) ops.push_back(KvOp::Put(p_ + "b/" + std::to_string(i), "v"));
  auto too_many = s().Txn({}, std::span(ops).first(kMaxTxnOps + 1));
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().code, Errc::kInvalidArgument) << too_many.error().message;

  ASSERT_TRUE(Put(s(), p_ + "fence", "epoch1").value().succeeded);
  Revision fence = s().Get(p_ + "fence").value().kvs[0].mod_revision;
  KvCompare guard = KvCompare::ModRevisionIs(p_ + "fence", fence);
  auto r = WriteInBatches(s(), std::span(&guard, 1), ops).value();
  EXPECT_TRUE(r.succeeded);
  EXPECT_EQ(s().GetPrefix(p_ + "b/").value().kvs.size(), 300u);
  // 300 ops need three transactions: three revisions.
  EXPECT_EQ(r.revision, fence + 3);

  // Values over the request size limit in all go in several transactions.
  std::vector<KvOp> big;
  for (int i = 0; i < 4; ++i)
    big.push_back(KvOp::Put(p_ + "big/" + std::to_string(i), std::string(600 << 10, 'x')));
  auto rb = WriteInBatches(s(), {}, big).value();
  EXPECT_TRUE(rb.succeeded);
  EXPECT_EQ(s().GetPrefix(p_ + "big/").value().kvs.size(), 4u);

  // A guard that no longer holds stops the batches before they write.
  ASSERT_TRUE(Put(s(), p_ + "fence", "epoch2").value().succeeded);
  std::vector<KvOp> late = {KvOp::Put(p_ + "late", "v")};
  EXPECT_FALSE(WriteInBatches(s(), std::span(&guard, 1), late).value().succeeded);
  EXPECT_TRUE(s().Get(p_ + "late").value().kvs.empty());
}

TEST_P(KvStoreTest, LeaseKeepsKeysWhileAliveAndExpires) {
  LeaseId lease = s().GrantLease(2000ms).value();
  ASSERT_NE(lease, 0);
  ASSERT_TRUE(Put(s(), p_ + "live", "1", lease).value().succeeded);
  WatchLog log;
  auto watch = s().Watch(p_ + "live", 0, log.Callback()).value();
  // Kept alive past two TTLs.
  auto until = std::chrono::steady_clock::now() + 4500ms;
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_TRUE(s().KeepAliveOnce(lease).ok());
    std::this_thread::sleep_for(500ms);
  }
  EXPECT_EQ(s().Get(p_ + "live").value().kvs.size(), 1u);
  // Left alone, it expires and takes the key with it.
  ASSERT_TRUE(log.WaitFor(
      [&](auto& ev, auto&) { return !ev.empty() && ev.back().type == WatchEvent::Type::kDelete; },
      8000ms));
  EXPECT_TRUE(s().Get(p_ + "live").value().kvs.empty());
  auto renewed = s().KeepAliveOnce(lease);
  ASSERT_FALSE(renewed.ok());
  EXPECT_EQ(renewed.error().code, Errc::kNotFound);
  // A put with a dead lease is refused.
  EXPECT_FALSE(Put(s(), p_ + "live", "2", lease).ok());
  // Revoke removes at once.
  LeaseId l2 = s().GrantLease(10000ms).value();
  ASSERT_TRUE(Put(s(), p_ + "rev", "1", l2).value().succeeded);
  ASSERT_TRUE(s().RevokeLease(l2).ok());
  EXPECT_TRUE(s().Get(p_ + "rev").value().kvs.empty());
}

TEST_P(KvStoreTest, WatchDeliversInOrderFromAPastRevision) {
  Revision first = Put(s(), p_ + "w/a", "1").value().revision;
  Put(s(), p_ + "elsewhere", "x").value();
  Put(s(), p_ + "w/b", "2").value();
  WatchLog log;
  auto watch = s().Watch(p_ + "w/", first, log.Callback()).value();
  ASSERT_TRUE(log.WaitFor([](auto& ev, auto&) { return ev.size() >= 2; }));
  KvOp del = KvOp::Delete(p_ + "w/a");
  Revision deleted = s().Txn({}, std::span(&del, 1)).value().revision;
  Put(s(), p_ + "w/c", "3").value();
  ASSERT_TRUE(log.WaitFor([](auto& ev, auto&) { return ev.size() >= 4; }));
  auto ev = log.events();
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].kv.key, p_ + "w/a");
  EXPECT_EQ(ev[0].kv.mod_revision, first);
  EXPECT_EQ(ev[1].kv.key, p_ + "w/b");
  EXPECT_EQ(ev[2].type, WatchEvent::Type::kDelete);
  EXPECT_EQ(ev[2].kv.mod_revision, deleted);
  EXPECT_EQ(ev[3].kv.value, "3");
  for (size_t i = 1; i < ev.size(); ++i)
    EXPECT_GT(ev[i].kv.mod_revision, ev[i - 1].kv.mod_revision);
}

TEST_P(KvStoreTest, WatchBelowCompactionEndsAndReReadRecovers) {
  Revision first = Put(s(), p_ + "c/a", "1").value().revision;
  Put(s(), p_ + "c/a", "2").value();
  Revision now = Put(s(), p_ + "c/b", "3").value().revision;
  ASSERT_TRUE(s().Compact(now).ok());
  WatchLog log;
  auto watch = s().Watch(p_ + "c/", first, log.Callback()).value();
  ASSERT_TRUE(
      log.WaitFor([](auto&, auto& b) { return !b.empty() && b.back().compact_revision > 0; }));
  watch.reset();
  // Recovery: read the state, then watch from the read's revision + 1.
  auto state = s().GetPrefix(p_ + "c/").value();
  ASSERT_EQ(state.kvs.size(), 2u);
  EXPECT_EQ(state.kvs[0].value, "2");
  WatchLog after;
  watch = s().Watch(p_ + "c/", state.revision + 1, after.Callback()).value();
  Put(s(), p_ + "c/d", "4").value();
  ASSERT_TRUE(after.WaitFor([](auto& ev, auto&) { return ev.size() == 1; }));
  EXPECT_EQ(after.events()[0].kv.key, p_ + "c/d");
  auto past = s().GetPrefix(p_ + "c/", first);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().code, Errc::kOutOfRange);
}

INSTANTIATE_TEST_SUITE_P(Backends, KvStoreTest, ::testing::Values("embedded", "etcd"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace strata::cluster
