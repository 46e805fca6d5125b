#pragma once
// Small POSIX helpers for the file-backed parts of src/tiered: an owning fd, errno -> Errc mapping,
// full-length read/write loops, opening a Put's source. Internal to src/tiered.
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"
#include "tiered/remote_storage.h"

namespace strata::tiered {

// Owns a file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// A Put's source ready to send: the file opened for reading (invalid for a
// span of memory) and the size to send.
struct OpenedPutSource {
  UniqueFd fd;
  uint64_t size = 0;
};
// kInvalidArgument for something other than a regular file.
Result<OpenedPutSource> OpenPutSource(const PutSource& src);

// Maps an errno value from an operation on `path` to an Error.
Error ErrnoError(int err, std::string_view what, std::string_view path);

// Writes all of data at the fd's current position (EINTR-safe).
Status WriteAll(int fd, ByteView data, std::string_view path);
// Reads exactly out.size() bytes at pos, or fails (kIoError) on a short file.
Status PreadExact(int fd, uint64_t pos, MutableByteView out, std::string_view path);
// mkdir -p.
Status MakeDirs(const std::string& dir);

}  // namespace strata::tiered
