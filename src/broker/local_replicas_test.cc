#include "broker/local_replicas.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>

#include "base/env.h"

namespace strata::broker {
namespace {

namespace fs = std::filesystem;

class LocalReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "strata-local-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Touch(const fs::path& path) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "x";
  }
  fs::path dir_;
};

TEST_F(LocalReplicasTest, MetaPropertiesPinTheDirectoryToOneClusterAndNode) {
  ASSERT_TRUE(CheckMetaProperties(dir_, "cluster-a", 1).ok());
  EXPECT_TRUE(fs::exists(dir_ / "meta.properties"));
  EXPECT_TRUE(CheckMetaProperties(dir_, "cluster-a", 1).ok());
  Status other = CheckMetaProperties(dir_, "cluster-b", 1);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("belongs to cluster cluster-a"), std::string::npos)
      << other.error().message;
  EXPECT_FALSE(CheckMetaProperties(dir_, "cluster-a", 2).ok());
}

TEST_F(LocalReplicasTest, ANewLogDirStaysNewUntilTheMarkerIsCleared) {
  EXPECT_EQ(*ReadNewLogDirMarker(dir_), 0);  // no meta.properties: new now, and marked
  ASSERT_TRUE(CheckMetaProperties(dir_, "cluster-a", 1).ok());
  EXPECT_EQ(*ReadNewLogDirMarker(dir_), 0);  // a crash before registering
  ASSERT_TRUE(WriteNewLogDirMarker(dir_, 42).ok());
  EXPECT_EQ(*ReadNewLogDirMarker(dir_), 42);  // a crash before the controller acted
  ASSERT_TRUE(ClearNewLogDirMarker(dir_).ok());
  EXPECT_EQ(*ReadNewLogDirMarker(dir_), -1);
  EXPECT_TRUE(ClearNewLogDirMarker(dir_).ok());  // clearing twice is fine
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(dir_ / ".strata_new_log_dir", ByteView()).ok());
  EXPECT_EQ(*ReadNewLogDirMarker(dir_), 0);
  const std::string junk = "12x";
  ASSERT_TRUE(Env::Default()
                  ->WriteFileAtomic(dir_ / ".strata_new_log_dir",
                                    ByteView(reinterpret_cast<const uint8_t*>(junk.data()), 3))
                  .ok());
  EXPECT_FALSE(ReadNewLogDirMarker(dir_).ok());
}

TEST_F(LocalReplicasTest, APartitionDirOfAnotherTopicIdIsEmptiedBeforeUse) {
  const fs::path p = dir_ / "orders-0";
  Touch(p / "00000000000000000000.log");  // an unmarked (older) directory is adopted
  auto adopted = ClaimPartitionDir(p, "id-1");
  ASSERT_TRUE(adopted.ok());
  EXPECT_FALSE(*adopted);
  EXPECT_TRUE(fs::exists(p / "00000000000000000000.log"));
  EXPECT_FALSE(*ClaimPartitionDir(p, "id-1"));
  auto replaced = ClaimPartitionDir(p, "id-2");
  ASSERT_TRUE(replaced.ok());
  EXPECT_TRUE(*replaced);
  EXPECT_FALSE(fs::exists(p / "00000000000000000000.log"));
  EXPECT_FALSE(*ClaimPartitionDir(p, "id-2"));
  EXPECT_FALSE(*ClaimPartitionDir(dir_ / "fresh-3", "id-3"));  // made and marked
  EXPECT_TRUE(fs::exists(dir_ / "fresh-3" / "partition.metadata"));
}

TEST_F(LocalReplicasTest, StrayDirsAreTheUnplacedPartitionDirsOnly) {
  Touch(dir_ / "kept-0" / "00000000000000000000.log");
  Touch(dir_ / "gone-1" / "00000000000000000000.log");
  Touch(dir_ / "my-topic-12" / "00000000000000000007.log");
  Touch(dir_ / "empty-2" / "partition.metadata");  // no segment: not a partition's data
  Touch(dir_ / ".remote-cache" / "chunk");
  Touch(dir_ / "strata-metadata" / "journal");
  Touch(dir_ / "not-a-number-x" / "00000000000000000000.log");
  auto stray = StrayPartitionDirs(
      dir_, [](const std::string& topic, int32_t p) { return topic == "kept" && p == 0; });
  std::vector<std::string> names;
  for (const auto& s : stray) names.push_back(s.filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"gone-1", "my-topic-12"}));
}

}  // namespace
}  // namespace strata::broker
