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

TEST(UuidTest, Base64MatchesKafkaForm) {
  TopicId id{};
  id[15] = 1;
  EXPECT_EQ(UuidToBase64(id), "AAAAAAAAAAAAAAAAAAAAAQ");
}

}  // namespace
}  // namespace strata::cluster
