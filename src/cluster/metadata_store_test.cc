#include "cluster/metadata_store.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace strata::cluster {
namespace {

class MetadataStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("strata-md-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(MetadataStoreTest, TopicsSurviveReopen) {
  std::string cluster;
  TopicId id{};
  {
    auto store = OpenEmbeddedMetadataStore(dir_).value();
    cluster = store->cluster_id();
    EXPECT_EQ(cluster.size(), 22u);
    auto t = store->CreateTopic(
        {.name = "orders", .partitions = 3, .configs = {{"retention.ms", "1000"}}});
    ASSERT_TRUE(t.ok());
    id = t->id;
    EXPECT_NE(id, TopicId{});
    EXPECT_EQ(store->CreateTopic({.name = "orders"}).error().code, Errc::kAlreadyExists);
    ASSERT_TRUE(store->SetPartitionCount("orders", 5).ok());
    EXPECT_FALSE(store->SetPartitionCount("orders", 2).ok());
    ASSERT_TRUE(store->CreateTopic({.name = "gone"}).ok());
    ASSERT_TRUE(store->DeleteTopic("gone").ok());
    EXPECT_EQ(store->DeleteTopic("gone").error().code, Errc::kNotFound);
    EXPECT_EQ(store->AllocateProducerIds(10).value(), 0);
  }
  auto store = OpenEmbeddedMetadataStore(dir_).value();
  EXPECT_EQ(store->cluster_id(), cluster);
  auto t = store->GetTopic("orders");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->id, id);
  EXPECT_EQ(t->partitions, 5);
  EXPECT_EQ(t->configs.at("retention.ms"), "1000");
  EXPECT_FALSE(store->GetTopic("gone").has_value());
  EXPECT_EQ(store->AllocateProducerIds(1).value(), 10);
}

TEST_F(MetadataStoreTest, RemoteLogOffsetsSurviveReopenAndGoWithTheTopic) {
  std::string kept_id, gone_id;
  {
    auto store = OpenEmbeddedMetadataStore(dir_).value();
    kept_id = UuidToBase64(store->CreateTopic({.name = "kept", .partitions = 2}).value().id);
    gone_id = UuidToBase64(store->CreateTopic({.name = "gone"}).value().id);
    EXPECT_FALSE(store->GetRemoteLogOffsets(kept_id, 0).has_value());
    ASSERT_TRUE(store->SetRemoteLogOffsets(kept_id, 0, {10, 99, -1}).ok());
    ASSERT_TRUE(store->SetRemoteLogOffsets(kept_id, 1, {0, 5, 3}).ok());
    ASSERT_TRUE(store->SetRemoteLogOffsets(kept_id, 0, {20, 199, 25}).ok());
    ASSERT_TRUE(store->SetRemoteLogOffsets(gone_id, 0, {0, 7, -1}).ok());
    ASSERT_TRUE(store->DeleteTopic("gone").ok());
    EXPECT_FALSE(store->GetRemoteLogOffsets(gone_id, 0).has_value());
  }
  auto store = OpenEmbeddedMetadataStore(dir_).value();
  EXPECT_EQ(store->GetRemoteLogOffsets(kept_id, 0), (RemoteLogOffsets{20, 199, 25}));
  EXPECT_EQ(store->GetRemoteLogOffsets(kept_id, 1), (RemoteLogOffsets{0, 5, 3}));
  EXPECT_FALSE(store->GetRemoteLogOffsets(gone_id, 0).has_value());
  EXPECT_FALSE(store->GetRemoteLogOffsets(kept_id, 2).has_value());
}

// Each save carries its leader's epoch: an older leader's is refused
// (kFenced), and a new leader's claim holds only over the bounds it loaded.
TEST_F(MetadataStoreTest, RemoteLogOffsetsAreFencedByLeaderEpoch) {
  auto store = OpenEmbeddedMetadataStore(dir_).value();
  const std::string id = UuidToBase64(store->CreateTopic({.name = "t"}).value().id);
  const RemoteLogOffsets first{0, 99, -1, LeaderEpoch(3)};
  ASSERT_TRUE(store->ClaimRemoteLog(id, 0, std::nullopt, first).ok());
  ASSERT_TRUE(store->SetRemoteLogOffsets(id, 0, {0, 199, -1, LeaderEpoch(3)}).ok());
  // A claim over bounds that moved since they were read must load again.
  EXPECT_EQ(store->ClaimRemoteLog(id, 0, first, {0, 99, -1, LeaderEpoch(4)}).error().code,
            Errc::kUnavailable);
  const RemoteLogOffsets current{0, 199, -1, LeaderEpoch(3)};
  ASSERT_TRUE(store->ClaimRemoteLog(id, 0, current, {0, 199, -1, LeaderEpoch(4)}).ok());
  // Epoch 3 is deposed: its saves and claims change nothing.
  EXPECT_EQ(store->SetRemoteLogOffsets(id, 0, {0, 299, -1, LeaderEpoch(3)}).error().code,
            Errc::kFenced);
  EXPECT_EQ(store->ClaimRemoteLog(id, 0, current, {0, 299, -1, LeaderEpoch(3)}).error().code,
            Errc::kFenced);
  EXPECT_EQ(store->GetRemoteLogOffsets(id, 0), (RemoteLogOffsets{0, 199, -1, LeaderEpoch(4)}));
  ASSERT_TRUE(store->SetRemoteLogOffsets(id, 0, {100, 299, -1, LeaderEpoch(4)}).ok());
  EXPECT_EQ(store->GetRemoteLogOffsets(id, 0), (RemoteLogOffsets{100, 299, -1, LeaderEpoch(4)}));
}

TEST_F(MetadataStoreTest, PendingRemoteDeletionsSurviveReopen) {
  {
    auto store = OpenEmbeddedMetadataStore(dir_).value();
    ASSERT_TRUE(store->AddPendingRemoteDeletion("t-a/0").ok());
    ASSERT_TRUE(store->AddPendingRemoteDeletion("t-a/1").ok());
    ASSERT_TRUE(store->AddPendingRemoteDeletion("t-a/1").ok());
    ASSERT_TRUE(store->SetRemoteLogOffsets("id", 0, {1, 2, -1}).ok());
  }
  {
    auto store = OpenEmbeddedMetadataStore(dir_).value();
    EXPECT_EQ(store->PendingRemoteDeletions(), (std::vector<std::string>{"t-a/0", "t-a/1"}));
    ASSERT_TRUE(store->RemovePendingRemoteDeletion("t-a/0").ok());
    ASSERT_TRUE(store->RemovePendingRemoteDeletion("never").ok());
  }
  auto store = OpenEmbeddedMetadataStore(dir_).value();
  EXPECT_EQ(store->PendingRemoteDeletions(), (std::vector<std::string>{"t-a/1"}));
  EXPECT_EQ(store->GetRemoteLogOffsets("id", 0), (RemoteLogOffsets{1, 2, -1}));
}

TEST(UuidTest, Base64MatchesKafkaForm) {
  TopicId id{};
  id[15] = 1;
  EXPECT_EQ(UuidToBase64(id), "AAAAAAAAAAAAAAAAAAAAAQ");
}

}  // namespace
}  // namespace strata::cluster
