// RecordsField file regions: encoded with a splice list, the buffer plus the
// spliced file bytes equal the copying encoding byte for byte.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "protocol/messages/fetch.h"
#include "protocol/wire.h"

namespace strata::protocol {
namespace {

// A temporary file holding `data`; removed (and closed) on destruction.
class TempFile {
 public:
  explicit TempFile(const Bytes& data) {
    char name[] = "/tmp/strata-region-XXXXXX";
    fd_ = ::mkstemp(name);
    path_ = name;
    EXPECT_EQ(::write(fd_, data.data(), data.size()), ssize_t(data.size()));
  }
  ~TempFile() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string path_;
};

FetchResponse TwoPartitions(int fd) {
  FetchResponse resp;
  auto& topic = resp.responses.emplace_back();
  topic.topic = "t";
  for (int p = 0; p < 2; ++p) {
    auto& part = topic.partitions.emplace_back();
    part.partition_index = p;
    part.high_watermark = 10 + p;
    part.records.Send(FileRegion{fd, uint64_t(100 + 50 * p), uint64_t(30 + p), nullptr});
  }
  return resp;
}

// Inserts each splice's file bytes at its place.
Bytes Assemble(const Bytes& buffer, const FileSplices& splices, const Bytes& file) {
  Bytes out;
  size_t at = 0;
  for (const FileSplice& s : splices) {
    out.insert(out.end(), buffer.begin() + at, buffer.begin() + s.at);
    if (s.region.in_memory()) {
      out.insert(out.end(), s.region.data, s.region.data + s.region.length);
    } else {
      out.insert(out.end(), file.begin() + s.region.offset,
                 file.begin() + s.region.offset + s.region.length);
    }
    at = s.at;
  }
  out.insert(out.end(), buffer.begin() + at, buffer.end());
  return out;
}

TEST(WireRegion, SplicedEqualsCopiedInEveryFetchVersion) {
  Bytes file(400);
  for (size_t i = 0; i < file.size(); ++i) file[i] = uint8_t(i * 7 + 3);
  TempFile tmp(file);
  for (int16_t v = 4; v <= 12; ++v) {
    const bool flexible = v >= 12;
    FetchResponse a = TwoPartitions(tmp.fd());
    Bytes copied;
    WireWriter copier(copied, flexible);
    a.Serde(copier, v);

    FetchResponse b = TwoPartitions(tmp.fd());
    Bytes spliced;
    FileSplices splices;
    WireWriter splicer(spliced, flexible, &splices);
    b.Serde(splicer, v);
    ASSERT_EQ(splices.size(), 2u) << v;
    EXPECT_EQ(spliced.size() + 30 + 31, copied.size()) << v;
    EXPECT_EQ(Assemble(spliced, splices, file), copied) << v;

    // And it decodes with the file bytes in each partition's records.
    FetchResponse decoded;
    WireReader reader(MutableByteView(copied), flexible);
    decoded.Serde(reader, v);
    ASSERT_TRUE(reader.ok()) << reader.error();
    const auto& r1 = decoded.responses.at(0).partitions.at(1).records.view;
    EXPECT_EQ(Bytes(r1.begin(), r1.end()), Bytes(file.begin() + 150, file.begin() + 181));
  }
}

// One records field made of a buffer's bytes, a file's and a buffer's again
// (a remote read across chunks): spliced in order, or copied, the same bytes.
TEST(WireRegion, MemoryAndFileRegionsOfOneFieldGoInOrder) {
  Bytes file(400);
  for (size_t i = 0; i < file.size(); ++i) file[i] = uint8_t(i * 5 + 1);
  TempFile tmp(file);
  auto memory = std::make_shared<const Bytes>(Bytes{1, 2, 3, 4, 5, 6, 7, 8});
  auto build = [&] {
    FetchResponse resp;
    auto& part = resp.responses.emplace_back().partitions.emplace_back();
    part.records.Send(FileRegion::Memory(memory->data() + 2, 3, memory));
    part.records.Send(FileRegion{tmp.fd(), 10, 20, nullptr});
    part.records.Send(FileRegion::Memory(memory->data(), 2, memory));
    return resp;
  };
  Bytes copied, spliced;
  FileSplices splices;
  WireWriter copier(copied, true), splicer(spliced, true, &splices);
  build().Serde(copier, 12);
  build().Serde(splicer, 12);
  ASSERT_EQ(splices.size(), 3u);
  EXPECT_EQ(splices[0].at, splices[2].at);
  EXPECT_EQ(Assemble(spliced, splices, file), copied);
  FetchResponse decoded;
  WireReader reader(MutableByteView(copied), true);
  decoded.Serde(reader, 12);
  ASSERT_TRUE(reader.ok()) << reader.error();
  const auto& r = decoded.responses.at(0).partitions.at(0).records.view;
  Bytes want{3, 4, 5};
  want.insert(want.end(), file.begin() + 10, file.begin() + 30);
  want.insert(want.end(), {1, 2});
  EXPECT_EQ(Bytes(r.begin(), r.end()), want);
}

}  // namespace
}  // namespace strata::protocol
