// Tests of DiskHighMark: the cached usage check behind produce back-pressure.
#include "broker/disk_high_mark.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace strata::broker {
namespace {

class DiskHighMarkTest : public ::testing::Test {
 protected:
  DiskHighMark Make(int64_t max_bytes, int max_percent) {
    DiskHighMarkOptions o;
    o.log_dir = std::filesystem::temp_directory_path().string();
    o.max_bytes = max_bytes;
    o.max_percent = max_percent;
    o.refresh_ms = 1000;
    o.register_metrics = false;
    return DiskHighMark(o, &clock_, [this] {
      ++samples_;
      return used_;
    });
  }

  ManualClock clock_{1000000};
  int64_t used_ = 0;
  int samples_ = 0;
};

TEST_F(DiskHighMarkTest, RefusesAboveTheByteMarkAndClearsByItself) {
  DiskHighMark hm = Make(1000, 0);
  used_ = 1000;  // at the mark: fine
  EXPECT_EQ(hm.Check(), std::nullopt);
  used_ = 1001;
  EXPECT_EQ(hm.Check(), std::nullopt);  // cached for refresh_ms
  clock_.Advance(999);
  EXPECT_EQ(hm.Check(), std::nullopt);
  EXPECT_EQ(samples_, 1);
  clock_.Advance(1);
  auto reason = hm.Check();
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("1001 bytes"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("strata.log.dir.high.mark.bytes=1000"), std::string::npos) << *reason;
  EXPECT_TRUE(hm.Check().has_value());
  EXPECT_EQ(hm.rejections(), 2u);
  EXPECT_EQ(samples_, 2);  // one sample per refresh period, however many produces

  used_ = 10;  // uploads drained, local retention freed space
  EXPECT_TRUE(hm.Check().has_value());
  clock_.Advance(1000);
  EXPECT_EQ(hm.Check(), std::nullopt);
  EXPECT_EQ(hm.rejections(), 3u);
  EXPECT_EQ(samples_, 3);
}

TEST_F(DiskHighMarkTest, OffWhenBothMarksAreOff) {
  DiskHighMark hm = Make(0, 0);
  used_ = int64_t(1) << 50;
  EXPECT_FALSE(hm.enabled());
  EXPECT_EQ(hm.Check(), std::nullopt);
  EXPECT_EQ(samples_, 0);
  EXPECT_FALSE(Make(0, 100).enabled());
}

TEST_F(DiskHighMarkTest, FilesystemPercentMark) {
  // Any real filesystem holding files is more than 0% used, never more than 100%.
  DiskHighMark tight = Make(0, 1);
  std::error_code ec;
  auto space = std::filesystem::space(std::filesystem::temp_directory_path(), ec);
  ASSERT_FALSE(ec);
  const double used_pct = 100.0 * double(space.capacity - space.free) /
                          double(space.capacity - space.free + space.available);
  if (used_pct > 1.0) {
    auto reason = tight.Check();
    ASSERT_TRUE(reason.has_value());
    EXPECT_NE(reason->find("strata.log.dir.high.mark.percent=1"), std::string::npos) << *reason;
  }
  EXPECT_EQ(Make(0, 99).Check().has_value(), used_pct > 99.0);
}

}  // namespace
}  // namespace strata::broker
