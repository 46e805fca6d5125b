// PartitionManager over real logs in a fresh directory: opening, reopening
// with the checkpointed high watermark, removal, and the directories it
// claims and deletes.
#include "broker/partition_manager.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>
#include <vector>

#include "protocol/batch_builder.h"

namespace strata::broker {
namespace {

using cluster::NodeId;
namespace fs = std::filesystem;

class PartitionManagerTest : public ::testing::Test {
 protected:
  PartitionManagerTest() {
    std::string tmpl = (fs::temp_directory_path() / "strata-partitions-XXXXXX").string();
    EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    topic_.name = "t";
    topic_.id = cluster::RandomTopicId();
    topic_.partitions = 2;
    state_.replicas = state_.isr = {NodeId(1)};
    state_.leader = NodeId(1);
    state_.leader_epoch = cluster::LeaderEpoch(3);
    Reset();
  }
  ~PartitionManagerTest() override {
    manager_->CloseAll();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // A new manager over the same directory, as a restarted broker has.
  void Reset() {
    if (manager_) manager_->CloseAll();
    manager_ = std::make_unique<PartitionManager>(dir_, NodeId(1), &clock_, Env::Default(),
                                                  /*cleaner=*/nullptr);
    manager_->SetWakeListener([this](const TopicPartition& tp) { woken_.push_back(tp); });
  }

  std::shared_ptr<Partition> Open(int32_t p) {
    auto opened = manager_->Open(topic_, p, state_, {});
    EXPECT_TRUE(opened.ok()) << (opened.ok() ? "" : opened.error().message);
    return opened.ok() ? *opened : nullptr;
  }

  // A batch of `records` records as a produce hands it over.
  static std::pair<Bytes, std::vector<storage::BatchInfo>> Batch(int records) {
    protocol::BatchBuilder builder;
    for (int i = 0; i < records; ++i) builder.Add("k", "v", 5);
    Bytes bytes = builder.Build();
    std::vector<storage::BatchInfo> infos{{.size = static_cast<int32_t>(bytes.size()),
                                           .record_count = records,
                                           .max_timestamp = 5,
                                           .offset_delta_of_max_timestamp = 0}};
    return {std::move(bytes), std::move(infos)};
  }
  // Appends `records` records as the leader; the ISR of one commits them.
  static void Produce(Partition& p, int records) {
    auto [bytes, infos] = Batch(records);
    auto appended = p.AppendAsLeader(MutableByteView(bytes), infos, 1);
    ASSERT_TRUE(appended.ok()) << appended.error().message;
  }

  fs::path dir_;
  ManualClock clock_{1'700'000'000'000};
  cluster::TopicRecord topic_;
  cluster::PartitionRecord state_;
  std::unique_ptr<PartitionManager> manager_;
  std::vector<TopicPartition> woken_;
};

TEST_F(PartitionManagerTest, OpenPublishesTheReplicaWithItsLogInItsDirectory) {
  bool prepared_before_published = false;
  auto opened = manager_->Open(topic_, 1, state_, {}, [&](const std::shared_ptr<Partition>& p) {
    prepared_before_published = manager_->Get(p->tp()) == nullptr;
  });
  ASSERT_TRUE(opened.ok());
  EXPECT_TRUE(prepared_before_published);
  EXPECT_EQ(manager_->Get({"t", 1}), *opened);
  EXPECT_EQ(manager_->Get({"t", 0}), nullptr);
  EXPECT_EQ((*opened)->log()->dir(), dir_ / "t-1");
  EXPECT_EQ((*opened)->leader_epoch(), cluster::LeaderEpoch(3));
  EXPECT_EQ(manager_->size(), 1u);
  EXPECT_EQ(manager_->Led().size(), 1u);
  Open(0);
  EXPECT_EQ(manager_->OfTopic("t", 2).size(), 2u);
  EXPECT_EQ(manager_->OfTopic("t", 1).size(), 1u);  // partitions [0, 1) only
}

// A restarted broker's replicas start from the checkpointed high watermark,
// not from the log start.
TEST_F(PartitionManagerTest, AReopenedReplicaStartsFromTheCheckpointedHighWatermark) {
  auto p = Open(0);
  Produce(*p, 5);
  Produce(*p, 2);
  ASSERT_EQ(p->high_watermark(), 7_o);
  ASSERT_TRUE(manager_->CheckpointHighWatermarks().ok());
  Produce(*p, 1);  // after the checkpoint: the reopened mark does not cover it
  p.reset();

  Reset();
  auto without = Open(0);  // marks not loaded: from the log start
  EXPECT_EQ(without->high_watermark(), 0_o);
  without.reset();

  Reset();
  manager_->LoadCheckpointedMarks();
  auto reopened = Open(0);
  EXPECT_EQ(reopened->log()->log_end_offset(), 8_o);
  EXPECT_EQ(reopened->high_watermark(), 7_o);
}

// Unpublished, a replica is removed for whatever holds it (an acks=all
// produce waiting there is woken and learns it), and its data stays until
// DeleteData.
TEST_F(PartitionManagerTest, UnpublishFencesTheReplicaAndDeleteDataRemovesItsDirectory) {
  auto p = Open(0);
  Produce(*p, 3);
  woken_.clear();
  auto removed = manager_->Unpublish({"t", 0});
  ASSERT_EQ(removed, p);
  EXPECT_TRUE(p->removed());
  EXPECT_EQ(manager_->Get({"t", 0}), nullptr);
  EXPECT_EQ(woken_, (std::vector<TopicPartition>{TopicPartition{"t", 0}}));
  EXPECT_TRUE(fs::exists(dir_ / "t-0"));

  auto [bytes, infos] = Batch(1);
  EXPECT_FALSE(p->AppendAsLeader(MutableByteView(bytes), infos, 1).ok());

  ASSERT_TRUE(manager_->DeleteData(*p).ok());
  EXPECT_FALSE(fs::exists(dir_ / "t-0"));
  EXPECT_EQ(manager_->Unpublish({"t", 0}), nullptr);
}

// A directory left by an older topic of the same name is that topic's data:
// the new topic's replica starts empty in it.
TEST_F(PartitionManagerTest, OpenEmptiesADirectoryHoldingAnOlderTopicsData) {
  Produce(*Open(0), 4);
  Reset();
  topic_.id = cluster::RandomTopicId();  // deleted and re-created meanwhile
  auto p = Open(0);
  EXPECT_EQ(p->log()->log_end_offset(), 0_o);
}

TEST_F(PartitionManagerTest, DeleteStrayDirsKeepsOnlyTheHostedReplicas) {
  Produce(*Open(0), 1);
  Produce(*Open(1), 1);
  Reset();
  Open(1);
  manager_->DeleteStrayDirs();
  EXPECT_FALSE(fs::exists(dir_ / "t-0"));
  EXPECT_TRUE(fs::exists(dir_ / "t-1"));
  EXPECT_EQ(manager_->Get({"t", 1})->log()->log_end_offset(), 1_o);
}

}  // namespace
}  // namespace strata::broker
