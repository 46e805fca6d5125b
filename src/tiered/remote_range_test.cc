// RemoteRange: copies and slices across memory and file regions give the
// object's own bytes.
#include "tiered/remote_range.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <random>

#include "tiered/posix_file.h"
#include "tiered/test_util.h"

namespace strata::tiered {
namespace {

using testing::RandomBytes;
using testing::TempDir;

// An object of 1000 bytes at position 5000, held as: 300 bytes in memory,
// 400 in a file (at file offset 17), 300 in memory.
class RemoteRangeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    object_ = RandomBytes(1000, 7);
    const std::string path = dir_.path() + "/part";
    Bytes file(17, 0xAA);
    file.insert(file.end(), object_.begin() + 300, object_.begin() + 700);
    file.insert(file.end(), 9, 0xBB);
    UniqueFd w(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
    ASSERT_TRUE(WriteAll(w.get(), file, path).ok());
    fd_ = std::make_shared<UniqueFd>(::open(path.c_str(), O_RDONLY));
    auto head = std::make_shared<const Bytes>(object_.begin(), object_.begin() + 300);
    auto tail = std::make_shared<const Bytes>(object_.begin() + 700, object_.end());
    range_ = RemoteRange(5000);
    range_.Append(FileRegion::Memory(head->data(), head->size(), head));
    range_.Append(FileRegion{fd_->get(), 17, 400, fd_});
    range_.Append(FileRegion::Memory(tail->data(), tail->size(), tail));
  }

  TempDir dir_;
  Bytes object_;
  std::shared_ptr<UniqueFd> fd_;
  RemoteRange range_;
};

TEST_F(RemoteRangeTest, CopyAndSliceGiveTheObjectsBytes) {
  EXPECT_EQ(range_.begin(), 5000u);
  EXPECT_EQ(range_.end(), 6000u);
  EXPECT_EQ(*range_.Gather(), object_);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 300; ++i) {
    const uint64_t from = rng() % 1001, to = from + rng() % (1001 - from);
    Bytes got(to - from);
    ASSERT_TRUE(range_.Copy(5000 + from, MutableByteView(got.data(), got.size())));
    ASSERT_EQ(got, Bytes(object_.begin() + from, object_.begin() + to)) << from << ".." << to;
    RemoteRange slice = range_.Slice(5000 + from, 5000 + to);
    ASSERT_EQ(slice.begin(), 5000 + from);
    ASSERT_EQ(slice.size(), to - from);
    ASSERT_EQ(*slice.Gather(), got) << from << ".." << to;
  }
  // Outside the range: refused, not read from the neighbouring file bytes.
  Bytes one(1);
  EXPECT_FALSE(range_.Copy(4999, MutableByteView(one.data(), 1)));
  EXPECT_FALSE(range_.Copy(6000, MutableByteView(one.data(), 1)));
  EXPECT_TRUE(range_.Slice(7000, 8000).empty());
}

TEST_F(RemoteRangeTest, AFileShorterThanItsRegionFailsTheCopy) {
  UniqueFd w(::open((dir_.path() + "/part").c_str(), O_WRONLY));
  ASSERT_EQ(::ftruncate(w.get(), 100), 0);
  Bytes got(100);
  EXPECT_FALSE(range_.Copy(5300, MutableByteView(got.data(), got.size())));
  EXPECT_EQ(range_.Gather().error().code, Errc::kIoError);
}

}  // namespace
}  // namespace strata::tiered
