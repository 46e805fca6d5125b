// A log dir written before the embedded store became a KvStore opens with
// everything it had: topics with their ids (remote data is stored under
// them), configs, remote log bounds, pending remote deletions, the
// producer-id block; the old files are renamed so the import runs once.
#include <gtest/gtest.h>

#include <fstream>

#include "cluster/metadata.h"

namespace strata::cluster {
namespace {

TEST(LegacyMetadataImport, KeepsTopicIdsOffsetsAndProducerIds) {
  auto dir =
      std::filesystem::temp_directory_path() / ("strata-legacy-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "strata-metadata.json")
      << R"({"version":1,"cluster_id":"AAAAAAAAAAAAAAAAAAAAAQ",
    "next_producer_id":5000,"topics":[{"name":"orders","id":"000102030405060708090a0b0c0d0e0f",
    "partitions":2,"replication_factor":1,"configs":{"retention.ms":"1000"},"internal":false}]})";
  std::ofstream(dir / "strata-remote-log.json") << R"({"partitions":{"AAECAwQFBgcICQoLDA0ODw:1":
    {"start":0,"end":99,"log_start":-1}},"pending_deletions":["/remote/gone-0"]})";
  MetadataOptions o;
  o.dir = dir / "strata-metadata";
  o.legacy_dir = dir;
  {
    auto md = Metadata::Open(o).value();
    EXPECT_EQ(md->cluster_id(), "AAAAAAAAAAAAAAAAAAAAAQ");
    auto t = md->GetTopic("orders").value();
    TopicId want{};
    for (int i = 0; i < 16; ++i) want[i] = static_cast<uint8_t>(i);
    EXPECT_EQ(t.id, want);
    EXPECT_EQ(t.partitions, 2);
    EXPECT_EQ(t.configs.at("retention.ms"), "1000");
    EXPECT_EQ(md->view().Partitions(UuidToBase64(want)).size(), 2u);
    auto off = md->GetRemoteLogOffsets(UuidToBase64(want), 1).value();
    EXPECT_EQ(off.end, 99);
    EXPECT_EQ(md->PendingRemoteDeletions(), std::vector<std::string>{"/remote/gone-0"});
    EXPECT_EQ(md->AllocateProducerIds(10).value(), 5000);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "strata-metadata.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "strata-metadata.json.imported"));
  // Reopened: from the store alone, and the producer block moved on.
  auto md = Metadata::Open(o).value();
  EXPECT_TRUE(md->GetTopic("orders").has_value());
  EXPECT_EQ(md->AllocateProducerIds(10).value(), 5010);
  std::filesystem::remove_all(dir);
}

TEST(LegacyMetadataImport, ADamagedFileIsAClearErrorAndNothingIsLost) {
  auto dir =
      std::filesystem::temp_directory_path() / ("strata-legacy-bad-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "strata-metadata.json") << "{\"cluster_id\": ";
  MetadataOptions o;
  o.dir = dir / "strata-metadata";
  o.legacy_dir = dir;
  auto md = Metadata::Open(o);
  ASSERT_FALSE(md.ok());
  EXPECT_EQ(md.error().code, Errc::kCorrupt);
  EXPECT_NE(md.error().message.find("strata-metadata.json"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "strata-metadata.json"));  // left for the operator
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace strata::cluster
