// ReplicaReconciler over a real embedded metadata store and real logs: what
// a pass opens, changes and removes, and what it tells the rest of the
// broker (recorded by a Host that only keeps a journal).
#include "broker/replica_reconciler.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cluster/kv_store.h"
#include "cluster/metadata.h"
#include "cluster/records.h"
#include "config/broker_config.h"

namespace strata::broker {
namespace {

using cluster::LeaderEpoch;
using cluster::NodeId;
namespace fs = std::filesystem;

// What the broker around the reconciler was told, in order.
class JournalHost : public ReplicaReconciler::Host {
 public:
  bool RefreshDynamicConfigs() override { return false; }
  void UpdateTiering(const TopicInfo&, const std::shared_ptr<Partition>& p) override {
    journal.push_back("tiering " + p->tp().ToString());
  }
  void SyncFetcher(const TopicInfo&, const std::shared_ptr<Partition>& p) override {
    journal.push_back("fetcher " + p->tp().ToString());
  }
  void Release(const TopicPartition& tp, bool delete_remote) override {
    journal.push_back("release " + tp.ToString() + (delete_remote ? " remote" : ""));
  }
  std::vector<std::string> journal;
};

class ReplicaReconcilerTest : public ::testing::Test {
 protected:
  ReplicaReconcilerTest() {
    std::string tmpl = (fs::temp_directory_path() / "strata-reconciler-XXXXXX").string();
    EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    cluster::MetadataOptions options;
    options.dir = dir_ / "metadata";
    options.local_node = NodeId(1);
    metadata_ = cluster::Metadata::Open(options).value();
    config::Properties props{{"node.id", "1"}, {"log.dirs", (dir_ / "logs").string()}};
    std::vector<std::string> unknown;
    config_ = std::make_unique<config::BrokerConfig>(
        config::BrokerConfig::FromProperties(props, &unknown));
    infos_ = std::make_unique<TopicInfos>(*config_);
    partitions_ = std::make_unique<PartitionManager>(dir_ / "logs", NodeId(1), Clock::Real(),
                                                     Env::Default(), nullptr);
    partitions_->SetWakeListener([this](const TopicPartition& tp) { woken_.push_back(tp); });
    reconciler_ = std::make_unique<ReplicaReconciler>(metadata_->view(), NodeId(1), Clock::Real(),
                                                      *partitions_, *infos_, host_);
    reconciler_->SetLeadershipListener([this](const TopicPartition& tp, bool leader) {
      host_.journal.push_back((leader ? "leads " : "stops leading ") + tp.ToString());
    });
  }
  ~ReplicaReconcilerTest() override {
    partitions_->CloseAll();
    metadata_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string MakeTopic(const std::string& name, const cluster::ReplicaAssignment& replicas) {
    cluster::TopicRecord t;
    t.name = name;
    t.partitions = static_cast<int32_t>(replicas.size());
    t.replication_factor = static_cast<int16_t>(replicas.front().size());
    return cluster::UuidToBase64(metadata_->CreateTopic(t, replicas).value().id);
  }
  // Writes partition `p`'s record as a controller would, and waits until the
  // view has it.
  void WriteRecord(const std::string& topic_id, int32_t p, const cluster::PartitionRecord& rec) {
    cluster::KvOp put =
        cluster::KvOp::Put(metadata_->keys().Partition(topic_id, p), cluster::EncodePartition(rec));
    auto written = metadata_->kv().Txn({}, std::span(&put, 1));
    ASSERT_TRUE(written.ok() && written->succeeded);
    ASSERT_TRUE(metadata_->view().WaitForRevision(written->revision, std::chrono::seconds(10)));
  }
  std::vector<std::string> Pass() {
    host_.journal.clear();
    Status st = reconciler_->Pass();
    EXPECT_TRUE(st.ok()) << st.error().message;
    return host_.journal;
  }
  // A pass's journal in sorted order: replicas are visited in no set order.
  std::vector<std::string> SortedPass() {
    auto journal = Pass();
    std::sort(journal.begin(), journal.end());
    return journal;
  }

  fs::path dir_;
  std::unique_ptr<cluster::Metadata> metadata_;
  std::unique_ptr<config::BrokerConfig> config_;
  std::unique_ptr<TopicInfos> infos_;
  std::unique_ptr<PartitionManager> partitions_;
  JournalHost host_;
  std::unique_ptr<ReplicaReconciler> reconciler_;
  std::vector<TopicPartition> woken_;
};

using Journal = std::vector<std::string>;

TEST_F(ReplicaReconcilerTest, OpensTheReplicasPlacedHereAndNoOthers) {
  MakeTopic("t", {{NodeId(1), NodeId(2)}, {NodeId(2), NodeId(1)}, {NodeId(2), NodeId(3)}});
  EXPECT_EQ(SortedPass(),
            (Journal{"fetcher t-0", "fetcher t-1", "leads t-0", "tiering t-0", "tiering t-1"}));
  ASSERT_NE(partitions_->Get({"t", 0}), nullptr);
  EXPECT_EQ(partitions_->Get({"t", 0})->leader(), NodeId(1));
  EXPECT_EQ(partitions_->Get({"t", 1})->leader(), NodeId(2));
  EXPECT_EQ(partitions_->Get({"t", 2}), nullptr);
  ASSERT_NE(infos_->Get("t"), nullptr);
  EXPECT_EQ(infos_->Get("t")->record.partitions, 3);

  // Nothing changed: each fetcher is only checked again.
  EXPECT_EQ(SortedPass(), (Journal{"fetcher t-0", "fetcher t-1"}));
}

// A leadership moved away reaches the partition (its waiters woken), its
// tiering and the leadership listener; a new leadership here the same.
TEST_F(ReplicaReconcilerTest, ALeadershipChangeReachesThePartitionItsTieringAndTheListener) {
  const std::string id = MakeTopic("t", {{NodeId(1), NodeId(2)}});
  Pass();
  auto p = partitions_->Get({"t", 0});
  woken_.clear();
  cluster::PartitionRecord rec = p->state();
  rec.leader = NodeId(2);
  rec.leader_epoch = LeaderEpoch(rec.leader_epoch.value() + 1);
  rec.partition_epoch = cluster::PartitionEpoch(rec.partition_epoch.value() + 1);
  WriteRecord(id, 0, rec);
  EXPECT_EQ(Pass(), (Journal{"tiering t-0", "stops leading t-0", "fetcher t-0"}));
  EXPECT_EQ(p->leader(), NodeId(2));
  EXPECT_EQ(woken_, (std::vector<TopicPartition>{TopicPartition{"t", 0}}));  // acks=all waits
  EXPECT_EQ(partitions_->Get({"t", 0}), p);  // the same replica, not reopened

  rec.leader = NodeId(1);
  rec.leader_epoch = LeaderEpoch(rec.leader_epoch.value() + 1);
  rec.partition_epoch = cluster::PartitionEpoch(rec.partition_epoch.value() + 1);
  WriteRecord(id, 0, rec);
  EXPECT_EQ(Pass(), (Journal{"tiering t-0", "leads t-0", "fetcher t-0"}));
  EXPECT_EQ(p->leader_epoch(), rec.leader_epoch);

  // Leader again at a newer epoch (elected anew, another leader perhaps in
  // between unseen): the listener hears the old leadership end and a new one.
  rec.leader_epoch = LeaderEpoch(rec.leader_epoch.value() + 2);
  rec.partition_epoch = cluster::PartitionEpoch(rec.partition_epoch.value() + 1);
  WriteRecord(id, 0, rec);
  EXPECT_EQ(Pass(), (Journal{"tiering t-0", "stops leading t-0", "leads t-0", "fetcher t-0"}));
  EXPECT_EQ(p->leader_epoch(), rec.leader_epoch);
  // An ISR change alone is no new leadership.
  rec.isr = {NodeId(1)};
  rec.partition_epoch = cluster::PartitionEpoch(rec.partition_epoch.value() + 1);
  WriteRecord(id, 0, rec);
  EXPECT_EQ(Pass(), (Journal{"fetcher t-0"}));
}

// A replica moved off this broker goes with its data, not the partition's
// remote data; a deleted topic's last leader deletes that too.
TEST_F(ReplicaReconcilerTest, RemovesWhatIsNoLongerPlacedHere) {
  const std::string id = MakeTopic("moved", {{NodeId(2), NodeId(1)}});
  MakeTopic("deleted", {{NodeId(1)}});
  Pass();
  auto moved = partitions_->Get({"moved", 0});
  ASSERT_NE(moved, nullptr);
  const fs::path moved_dir = moved->log()->dir();

  cluster::PartitionRecord rec = moved->state();
  rec.replicas = rec.isr = {NodeId(2), NodeId(3)};
  rec.partition_epoch = cluster::PartitionEpoch(rec.partition_epoch.value() + 1);
  WriteRecord(id, 0, rec);
  // Removals come first.
  EXPECT_EQ(Pass(), (Journal{"release moved-0", "fetcher deleted-0"}));
  EXPECT_TRUE(moved->removed());
  EXPECT_EQ(partitions_->Get({"moved", 0}), nullptr);
  EXPECT_FALSE(fs::exists(moved_dir));
  EXPECT_NE(infos_->Get("moved"), nullptr);  // the topic is still there

  ASSERT_TRUE(metadata_->DeleteTopic("deleted").ok());  // the view has it on return
  EXPECT_EQ(Pass(), (Journal{"stops leading deleted-0", "release deleted-0 remote"}));
  EXPECT_EQ(partitions_->Get({"deleted", 0}), nullptr);
  EXPECT_EQ(infos_->Get("deleted"), nullptr);
}

// Set after replicas opened, the listener learns at once which this broker
// leads.
TEST_F(ReplicaReconcilerTest, ALateLeadershipListenerLearnsTheCurrentLeaderships) {
  MakeTopic("t", {{NodeId(1)}, {NodeId(2), NodeId(1)}});
  Pass();
  std::vector<std::string> told;
  reconciler_->SetLeadershipListener([&](const TopicPartition& tp, bool leader) {
    told.push_back(tp.ToString() + (leader ? " leads" : " stops"));
  });
  EXPECT_EQ(told, (std::vector<std::string>{"t-0 leads"}));
}

}  // namespace
}  // namespace strata::broker
