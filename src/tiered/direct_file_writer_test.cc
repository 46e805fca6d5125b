// DirectFileWriter: files written directly or through the page cache hold
// exactly the bytes given, whatever their length's alignment.
#include "tiered/direct_file_writer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "tiered/test_util.h"

namespace strata::tiered {
namespace {

using testing::RandomBytes;
using testing::TempDir;

Bytes ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(DirectFileWriterTest, FilesHoldExactlyTheirBytes) {
  TempDir dir;
  DirectFileWriter writer(/*min_direct_bytes=*/8192);
  // Below the threshold, aligned, unaligned, growing and shrinking (the
  // scratch buffer is reused), then empty.
  const size_t sizes[] = {100, 8192, 3 * 4096 + 17, 1 << 20, 9000, 0};
  int n = 0;
  for (size_t size : sizes) {
    const std::string path = dir.path() + "/f" + std::to_string(n);
    Bytes data = RandomBytes(size, 30 + n++);
    ASSERT_TRUE(writer.Write(path, data).ok()) << size;
    EXPECT_EQ(ReadWhole(path), data) << size;
  }
  // Rewriting a file replaces it whole.
  const std::string path = dir.path() + "/f1";
  Bytes shorter = RandomBytes(4097 + 8192, 99);
  ASSERT_TRUE(writer.Write(path, shorter).ok());
  EXPECT_EQ(ReadWhole(path), shorter);
  EXPECT_EQ(writer.Write(dir.path() + "/missing/dir/f", shorter).error().code, Errc::kNotFound);
}

}  // namespace
}  // namespace strata::tiered
