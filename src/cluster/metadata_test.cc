// cluster::Metadata on both backends: several brokers' handles on one store
// see each other's writes through their watched views, CAS updates lose
// nothing under contention, bad records are skipped, and a view that falls
// behind a compaction loads again.
#include "cluster/metadata.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "cluster/embedded_kv_store.h"
#include "cluster/records.h"
#include "cluster/test_util.h"

namespace strata::cluster {
namespace {

using namespace std::chrono_literals;

// Delegates to a KvStore, but lets a test cut every watch and resume it
// later from the last delivered revision + 1, as a reconnecting etcd client
// does, so that a compaction can happen while the watch is away.
class InterruptibleKvStore : public KvStore {
 public:
  explicit InterruptibleKvStore(KvStore& base) : base_(base) {}

  Result<RangeResult> Get(const std::string& key) override { return base_.Get(key); }
  Result<RangeResult> Range(const std::string& from, const std::string& end, Revision at,
                            int64_t limit) override {
    return base_.Range(from, end, at, limit);
  }
  Result<TxnResult> Txn(std::span<const KvCompare> c, std::span<const KvOp> o) override {
    return base_.Txn(c, o);
  }
  Result<LeaseId> GrantLease(std::chrono::milliseconds ttl) override {
    return base_.GrantLease(ttl);
  }
  Result<std::chrono::milliseconds> KeepAliveOnce(LeaseId l) override {
    return base_.KeepAliveOnce(l);
  }
  Status RevokeLease(LeaseId l) override { return base_.RevokeLease(l); }
  Status Compact(Revision rev) override { return base_.Compact(rev); }
  std::string Describe() const override { return base_.Describe(); }
  Result<QuorumStatus> DescribeQuorum() override { return base_.DescribeQuorum(); }

  Result<std::unique_ptr<KvWatch>> Watch(const std::string& prefix, Revision start,
                                         WatchCallback cb) override {
    auto w = std::make_unique<Relay>(this, prefix, std::move(cb), start);
    std::lock_guard lock(mu_);
    relays_.insert(w.get());
    if (!cut_) w->Connect(start);
    return std::unique_ptr<KvWatch>(std::move(w));
  }

  void Cut() {
    std::lock_guard lock(mu_);
    cut_ = true;
    for (Relay* r : relays_) r->inner.reset();
  }
  void Resume() {
    std::lock_guard lock(mu_);
    cut_ = false;
    for (Relay* r : relays_) r->Connect(r->next);
  }

 private:
  struct Relay : KvWatch {
    Relay(InterruptibleKvStore* o, std::string p, WatchCallback c, Revision n)
        : owner(o), prefix(std::move(p)), cb(std::move(c)), next(n) {}
    ~Relay() override {
      std::lock_guard lock(owner->mu_);
      owner->relays_.erase(this);
      inner.reset();
    }
    void Connect(Revision from) {
      inner = owner->base_
                  .Watch(prefix, from,
                         [this](const WatchBatch& b) {
                           for (const auto& e : b.events)
                             next = std::max(next.load(), e.kv.mod_revision + 1);
                           cb(b);
                         })
                  .value();
    }
    InterruptibleKvStore* owner;
    std::string prefix;
    WatchCallback cb;
    std::atomic<Revision> next;
    std::unique_ptr<KvWatch> inner;
  };
  KvStore& base_;
  std::mutex mu_;
  bool cut_ = false;
  std::set<Relay*> relays_;
};

class MetadataTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("strata-meta-" + std::to_string(::getpid()) + "-" +
            std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::remove_all(dir_);
    if (GetParam() == "etcd") {
      etcd_ = std::make_unique<testing::EtcdCluster>(1);
      kv_ = OpenEtcdKvStore({etcd_->endpoints(), 3000ms}).value();
    } else {
      kv_ = EmbeddedKvStore::Open(dir_).value();
    }
  }
  void TearDown() override {
    kv_.reset();
    etcd_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<Metadata> Broker(int node, KvStore* kv = nullptr) {
    MetadataOptions o;
    o.local_node = NodeId(node);
    o.timeout = 5000ms;
    return Metadata::OpenOn(kv ? *kv : *kv_, o).value();
  }

  std::filesystem::path dir_;
  std::unique_ptr<testing::EtcdCluster> etcd_;
  std::unique_ptr<KvStore> kv_;
};

// Waits (bounded) until `pred` holds.
using testing::Eventually;

TEST_P(MetadataTest, BrokersShareOneClusterAndSeeEachOthersTopics) {
  auto b1 = Broker(1);
  auto b2 = Broker(2);
  EXPECT_EQ(b1->cluster_id(), b2->cluster_id());
  EXPECT_EQ(b1->cluster_id().size(), 22u);
  auto t =
      b1->CreateTopic({.name = "orders", .partitions = 200, .configs = {{"retention.ms", "1000"}}});
  ASSERT_TRUE(t.ok()) << t.error().message;
  // Read-your-writes on the writer, and the other broker's view follows.
  ASSERT_TRUE(b1->GetTopic("orders"));
  ASSERT_TRUE(Eventually([&] { return b2->GetTopic("orders").has_value(); }));
  EXPECT_EQ(b2->GetTopic("orders")->id, t->id);
  EXPECT_EQ(b2->view().Partitions(UuidToBase64(t->id)).size(), 200u);  // > one txn of records
  auto p7 = b2->view().Partition(UuidToBase64(t->id), 7).value();
  EXPECT_EQ(p7.record.leader, NodeId(1));
  EXPECT_EQ(p7.record.replicas, std::vector<NodeId>{NodeId(1)});
  EXPECT_EQ(b2->CreateTopic({.name = "orders"}).error().code, Errc::kAlreadyExists);

  ASSERT_TRUE(b2->SetPartitionCount("orders", 210).ok());
  ASSERT_TRUE(Eventually([&] { return b1->GetTopic("orders")->partitions == 210; }));
  EXPECT_EQ(b1->view().Partitions(UuidToBase64(t->id)).size(), 210u);

  ASSERT_TRUE(b2->DeleteTopic("orders").ok());
  ASSERT_TRUE(Eventually([&] { return !b1->GetTopic("orders").has_value(); }));
  EXPECT_TRUE(b1->view().Partitions(UuidToBase64(t->id)).empty());
  EXPECT_EQ(b1->DeleteTopic("orders").error().code, Errc::kNotFound);
}

// Topic creation, deletion and new partitions are the controller's: they pass
// only with the election fence, and a deposed controller that has not noticed
// yet (its fence names a controller key that is gone) writes nothing and is
// told kFenced, never "already exists" or "not found".
TEST_P(MetadataTest, TopicWritesNeedTheControllerFence) {
  auto b1 = Broker(1);
  const std::string controller_key = "/test-controller";
  auto elect = [&]() -> Revision {
    KvOp put = KvOp::Put(controller_key, "1");
    auto r = kv_->Txn({}, std::span(&put, 1));
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->revision : 0;
  };
  std::atomic<bool> active{false};
  std::atomic<Revision> election{0};
  b1->SetControllerFence([&]() -> std::optional<KvCompare> {
    if (!active) return std::nullopt;
    return KvCompare::CreatedAt(controller_key, election.load());
  });
  auto refused = b1->CreateTopic({.name = "t", .partitions = 3});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Errc::kFenced);
  EXPECT_FALSE(b1->GetTopic("t"));

  election = elect();
  active = true;
  ASSERT_TRUE(b1->CreateTopic({.name = "t", .partitions = 3}).ok());
  ASSERT_TRUE(b1->SetPartitionCount("t", 4).ok());

  // Another broker's election replaces the key; b1 still believes it leads.
  KvOp del = KvOp::Delete(controller_key);
  ASSERT_TRUE(kv_->Txn({}, std::span(&del, 1)).ok());
  elect();
  auto stale = b1->CreateTopic({.name = "t2", .partitions = 2});
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, Errc::kFenced) << stale.error().message;
  EXPECT_FALSE(b1->GetTopic("t2"));
  EXPECT_EQ(b1->SetPartitionCount("t", 5).error().code, Errc::kFenced);
  EXPECT_EQ(b1->DeleteTopic("t").error().code, Errc::kFenced);
  ASSERT_TRUE(b1->GetTopic("t"));
  EXPECT_EQ(b1->GetTopic("t")->partitions, 4);
}

TEST_P(MetadataTest, DynamicBrokerConfigsAreSharedByEveryBroker) {
  auto b1 = Broker(1);
  auto b2 = Broker(2);
  EXPECT_TRUE(b2->BrokerConfigs("default").empty());
  ASSERT_TRUE(b1->UpdateBrokerConfigs("default", [](auto& c) {
                  c["log.retention.ms"] = "1000";
                  return Status::Ok();
                }).ok());
  EXPECT_EQ(b1->BrokerConfigs("default").at("log.retention.ms"), "1000");  // read-your-writes
  ASSERT_TRUE(Eventually([&] { return b2->BrokerConfigs("default").size() == 1; }));
  ASSERT_TRUE(b2->UpdateBrokerConfigs("default", [](auto& c) {
                  c.erase("log.retention.ms");
                  c["log.segment.bytes"] = "20000";
                  return Status::Ok();
                }).ok());
  ASSERT_TRUE(Eventually([&] { return b1->BrokerConfigs("default").count("log.segment.bytes"); }));
  EXPECT_FALSE(b1->BrokerConfigs("default").count("log.retention.ms"));
  EXPECT_TRUE(b1->BrokerConfigs("2").empty());
  auto refused = b1->UpdateBrokerConfigs(
      "2", [](auto&) { return Status(MakeError(Errc::kInvalidArgument, "no")); });
  EXPECT_EQ(refused.error().code, Errc::kInvalidArgument);
}

TEST_P(MetadataTest, ConcurrentConfigChangesFromTwoBrokersAreAllKept) {
  auto b1 = Broker(1);
  auto b2 = Broker(2);
  ASSERT_TRUE(b1->CreateTopic({.name = "t"}).ok());
  ASSERT_TRUE(Eventually([&] { return b2->GetTopic("t").has_value(); }));
  // Each broker adds its own keys, read-modify-write, at the same time.
  auto writer = [](Metadata* md, const std::string& who) {
    for (int i = 0; i < 15; ++i) {
      Status st = md->UpdateTopicConfigs("t", [&](std::map<std::string, std::string>& c) {
        c[who + std::to_string(i)] = "v";
        return Status::Ok();
      });
      ASSERT_TRUE(st.ok()) << st.error().message;
    }
  };
  std::thread t1(writer, b1.get(), "a");
  std::thread t2(writer, b2.get(), "b");
  t1.join();
  t2.join();
  ASSERT_TRUE(Eventually([&] { return b1->GetTopic("t")->configs.size() == 30u; }))
      << b1->GetTopic("t")->configs.size();
  // Producer id blocks from both brokers never overlap.
  std::set<int64_t> firsts;
  for (int i = 0; i < 10; ++i) {
    firsts.insert(b1->AllocateProducerIds(1000).value());
    firsts.insert(b2->AllocateProducerIds(1000).value());
  }
  EXPECT_EQ(firsts.size(), 20u);
  int64_t prev = -1000;
  for (int64_t f : firsts) {
    EXPECT_GE(f, prev + 1000);
    prev = f;
  }
}

TEST_P(MetadataTest, ACorruptRecordIsSkippedAndTheRestServed) {
  auto b1 = Broker(1);
  ASSERT_TRUE(b1->CreateTopic({.name = "good"}).ok());
  KvOp bad = KvOp::Put(b1->keys().Topic("bad"), "{not json");
  ASSERT_TRUE(kv_->Txn({}, std::span(&bad, 1)).ok());
  ASSERT_TRUE(Eventually([&] { return b1->view().corrupt_records() == 1; }));
  auto b2 = Broker(2);  // loading past it works too
  EXPECT_EQ(b2->view().corrupt_records(), 1);
  EXPECT_TRUE(b2->GetTopic("good").has_value());
  EXPECT_FALSE(b2->GetTopic("bad").has_value());
  EXPECT_EQ(b2->ListTopics().size(), 1u);
}

TEST_P(MetadataTest, AViewBehindACompactionLoadsAgain) {
  InterruptibleKvStore flaky(*kv_);
  auto writer = Broker(1);
  auto reader = Broker(2, &flaky);
  ASSERT_TRUE(writer->CreateTopic({.name = "before"}).ok());
  ASSERT_TRUE(Eventually([&] { return reader->GetTopic("before").has_value(); }));
  int64_t loads = reader->view().reloads();
  flaky.Cut();
  ASSERT_TRUE(writer->CreateTopic({.name = "during"}).ok());
  ASSERT_TRUE(writer->DeleteTopic("before").ok());
  Revision now = writer->view().revision();
  ASSERT_TRUE(kv_->Compact(now).ok());
  flaky.Resume();
  ASSERT_TRUE(Eventually([&] { return reader->view().reloads() > loads; }));
  ASSERT_TRUE(Eventually([&] { return reader->GetTopic("during").has_value(); }));
  EXPECT_FALSE(reader->GetTopic("before").has_value());
  // And it follows changes again afterwards.
  ASSERT_TRUE(writer->CreateTopic({.name = "after"}).ok());
  ASSERT_TRUE(Eventually([&] { return reader->GetTopic("after").has_value(); }));
}

TEST_P(MetadataTest, RemoteLogOffsetsAndPendingDeletions) {
  auto b1 = Broker(1);
  auto b2 = Broker(2);
  ASSERT_TRUE(b1->SetRemoteLogOffsets("AAAAAAAAAAAAAAAAAAAAAA", 3, {0, 99, -1}).ok());
  ASSERT_TRUE(b1->SetRemoteLogOffsets("AAAAAAAAAAAAAAAAAAAAAA", 3, {0, 199, 5}).ok());
  ASSERT_TRUE(Eventually([&] {
    auto o = b2->GetRemoteLogOffsets("AAAAAAAAAAAAAAAAAAAAAA", 3);
    return o && *o == RemoteLogOffsets{0, 199, 5};
  }));
  ASSERT_TRUE(b1->AddPendingRemoteDeletion("/remote/t-0/with%slash").ok());
  ASSERT_TRUE(Eventually([&] { return b2->PendingRemoteDeletions().size() == 1; }));
  EXPECT_EQ(b2->PendingRemoteDeletions()[0], "/remote/t-0/with%slash");
  ASSERT_TRUE(b2->RemovePendingRemoteDeletion("/remote/t-0/with%slash").ok());
  ASSERT_TRUE(Eventually([&] { return b1->PendingRemoteDeletions().empty(); }));
  // Removing what is gone, after a write outside our prefix (another
  // cluster on the same etcd): answered at once, not after a timeout.
  KvOp foreign = KvOp::Put("/another-cluster/x", "y");
  ASSERT_TRUE(kv_->Txn({}, std::span(&foreign, 1)).ok());
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(b1->RemovePendingRemoteDeletion("/remote/t-0/with%slash").ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1000ms);
}

// A load over more than a page of partition records (read in cut ranges,
// see MetadataView::ReadAll) sees every record, whatever the topic ids.
TEST_P(MetadataTest, ALoadOverManyPagesSeesEveryRecord) {
  auto writer = Broker(1);
  std::map<std::string, int32_t> expected;  // topic id -> partitions
  for (int t = 0; t < 6; ++t) {
    auto topic = writer->CreateTopic({.name = "big-" + std::to_string(t), .partitions = 2000});
    ASSERT_TRUE(topic.ok()) << topic.error().message;
    expected[UuidToBase64(topic->id)] = 2000;
  }
  auto reader = Broker(2);  // loads after the writes: > 12,000 keys
  for (const auto& [id, count] : expected) {
    auto parts = reader->view().Partitions(id);
    ASSERT_EQ(parts.size(), static_cast<size_t>(count)) << id;
    EXPECT_EQ(parts.begin()->first, 0);
    EXPECT_EQ(parts.rbegin()->first, count - 1);
  }
  EXPECT_EQ(reader->ListTopics().size(), 6u);
}

// Deleting a tiered topic (or one that has remote log records) leaves a
// DeletedTopic record in the same transaction, for the controller to delete
// its remote data; a local topic leaves none.
TEST_P(MetadataTest, DeletingATieredTopicLeavesARecordOfItsRemoteData) {
  auto b1 = Broker(1);
  auto b2 = Broker(2);
  auto tiered = b1->CreateTopic(
      {.name = "tiered", .partitions = 3, .configs = {{"remote.storage.enable", "true"}}});
  ASSERT_TRUE(tiered.ok());
  auto was_tiered = b1->CreateTopic({.name = "was-tiered", .partitions = 2});
  ASSERT_TRUE(was_tiered.ok());
  ASSERT_TRUE(b1->SetRemoteLogOffsets(UuidToBase64(was_tiered->id), 1, {0, 9, -1}).ok());
  ASSERT_TRUE(b1->CreateTopic({.name = "local", .partitions = 2}).ok());
  for (const char* name : {"tiered", "was-tiered", "local"})
    ASSERT_TRUE(b1->DeleteTopic(name).ok());

  ASSERT_TRUE(Eventually([&] { return b2->DeletedTopics().size() == 2; }));
  auto deleted = b2->DeletedTopics();
  std::map<std::string, Metadata::DeletedTopic> by_name;
  for (auto& d : deleted) by_name[d.topic.name] = d;
  ASSERT_TRUE(by_name.contains("tiered") && by_name.contains("was-tiered"));
  EXPECT_EQ(by_name["tiered"].topic.id, tiered->id);
  EXPECT_EQ(by_name["tiered"].topic.partitions, 3);
  EXPECT_EQ(by_name["was-tiered"].topic.id, was_tiered->id);

  ASSERT_TRUE(b2->ForgetDeletedTopic(by_name["tiered"]).ok());
  ASSERT_TRUE(Eventually([&] { return b1->DeletedTopics().size() == 1; }));
  EXPECT_EQ(b1->DeletedTopics()[0].topic.name, "was-tiered");
  EXPECT_FALSE(b1->ForgetDeletedTopic(by_name["tiered"]).ok());  // already gone
}

INSTANTIATE_TEST_SUITE_P(Backends, MetadataTest, ::testing::Values("embedded", "etcd"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace strata::cluster
