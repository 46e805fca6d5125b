#pragma once
// FileRegion: bytes that live in an open file (a log segment) rather than in
// memory, so a response can send them with sendfile(2) instead of copying
// them through user space. `keepalive` owns whatever keeps `fd` open (the
// segment); the bytes in [offset, offset + length) must not change while the
// region is alive (true for log data below the high watermark).
//
// A response that carries regions is a byte buffer plus a list of splices:
// region i goes on the wire right before byte `at` of the buffer.
#include <cstdint>
#include <memory>
#include <vector>

namespace strata {

struct FileRegion {
  int fd = -1;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::shared_ptr<const void> keepalive;
};

struct FileSplice {
  size_t at = 0;  // position in the response buffer the region precedes
  FileRegion region;
};

using FileSplices = std::vector<FileSplice>;

}  // namespace strata
