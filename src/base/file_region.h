#pragma once
// FileRegion: bytes a response sends from where they already are instead of
// from the response buffer: in an open file (a log segment, a cached chunk
// of a remote segment), sent with sendfile(2) rather than copied through
// user space, or in a buffer of their own (a chunk just fetched from remote
// storage), sent from there. `keepalive` owns whatever keeps `fd` open or
// `data` allocated; the bytes must not change while the region is alive
// (true for log data below the high watermark and for remote chunks).
//
// A response that carries regions is a byte buffer plus a list of splices:
// region i goes on the wire right before byte `at` of the buffer (several
// regions at one place go in list order).
#include <cstdint>
#include <memory>
#include <vector>

namespace strata {

struct FileRegion {
  int fd = -1;
  uint64_t offset = 0;  // in the file; unused for memory
  uint64_t length = 0;
  std::shared_ptr<const void> keepalive;
  const uint8_t* data = nullptr;  // set: the bytes are in memory, [data, data + length)

  bool in_memory() const { return data != nullptr; }
  // A region of `length` bytes at `data`, kept alive by `owner`.
  static FileRegion Memory(const uint8_t* data, uint64_t length,
                           std::shared_ptr<const void> owner) {
    return FileRegion{-1, 0, length, std::move(owner), data};
  }
};

struct FileSplice {
  size_t at = 0;  // position in the response buffer the region precedes
  FileRegion region;
};

using FileSplices = std::vector<FileSplice>;

// Reads exactly `n` bytes of `fd` at `pos` into `out` (pread, resumed after
// short reads and EINTR): 0, or the errno (EIO when the file ends first).
int PreadAll(int fd, uint64_t pos, uint8_t* out, uint64_t n);

// Copies the region's bytes [from, from + n) to `out`; false on a short or
// failed read (a file that shrank).
bool CopyRegionBytes(const FileRegion& region, uint64_t from, uint64_t n, uint8_t* out);

}  // namespace strata
