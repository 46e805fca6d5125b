// replication-offset-checkpoint: round trip in Kafka's text format, a
// missing file, malformed files refused with the line named, and a full disk
// failing the write without losing the previous checkpoint.
#include "storage/high_watermark_checkpoint.h"

#include <gtest/gtest.h>

#include <fstream>

#include "storage/test_util.h"

namespace strata::storage {
namespace {

class HighWatermarkCheckpointTest : public testing::TempDirTest {};

TEST_F(HighWatermarkCheckpointTest, RoundTripsInKafkasFormat) {
  auto none = ReadHighWatermarks(root_);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  HighWatermarks marks{{{"orders", 0}, 120}, {{"orders", 11}, 0}, {{"__consumer_offsets", 3}, 7}};
  ASSERT_TRUE(WriteHighWatermarks(root_, marks).ok());
  std::ifstream f(root_ / kHighWatermarkCheckpoint);
  std::string text((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(text, "0\n3\n__consumer_offsets 3 7\norders 0 120\norders 11 0\n");
  auto back = ReadHighWatermarks(root_);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, marks);
}

TEST_F(HighWatermarkCheckpointTest, MalformedFilesAreRefused) {
  for (const char* text :
       {"1\n0\n", "0\n2\norders 0 5\n", "0\n1\norders x 5\n", "0\n1\nt 0 -3\n"}) {
    std::ofstream(root_ / kHighWatermarkCheckpoint) << text;
    auto got = ReadHighWatermarks(root_);
    ASSERT_FALSE(got.ok()) << text;
    EXPECT_EQ(got.error().code, Errc::kCorrupt);
    EXPECT_NE(got.error().message.find(kHighWatermarkCheckpoint), std::string::npos);
  }
}

TEST_F(HighWatermarkCheckpointTest, FullDiskFailsTheWriteAndKeepsThePreviousCheckpoint) {
  FaultInjectingEnv env(Env::Default());
  HighWatermarks before{{{"orders", 0}, 120}};
  ASSERT_TRUE(WriteHighWatermarks(root_, before, &env).ok());
  env.FailAfterBytes(8, /*torn=*/true);
  Status st = WriteHighWatermarks(root_, {{{"orders", 0}, 500}, {{"orders", 1}, 7}}, &env);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kIoError);
  EXPECT_NE(st.error().message.find("No space"), std::string::npos) << st.error().message;
  auto back = ReadHighWatermarks(root_, &env);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, before);
  EXPECT_FALSE(std::filesystem::exists(root_ / (std::string(kHighWatermarkCheckpoint) + ".tmp")));
}

}  // namespace
}  // namespace strata::storage
