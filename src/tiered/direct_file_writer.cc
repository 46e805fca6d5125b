#include "tiered/direct_file_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tiered/posix_file.h"

namespace strata::tiered {

Status DirectFileWriter::Write(const std::string& path, ByteView data) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  if (direct_ && data.size() >= min_direct_bytes_) {
    UniqueFd fd(::open(path.c_str(), kFlags | O_DIRECT, 0644));
    if (!fd.valid() && errno != EINVAL) return ErrnoError(errno, "create", path);
    const int error = fd.valid() ? WriteDirect(fd.get(), data) : EINVAL;
    if (error == 0) return Status::Ok();
    if (error != EINVAL) return ErrnoError(error, "write", path);
    // Not on this filesystem: some refuse O_DIRECT at open (tmpfs), some
    // only at the first write. The file is written again, buffered.
    direct_ = false;
  }
  UniqueFd fd(::open(path.c_str(), kFlags, 0644));
  if (!fd.valid()) return ErrnoError(errno, "create", path);
  return WriteAll(fd.get(), data, path);
}

int DirectFileWriter::WriteDirect(int fd, ByteView data) {
  const size_t padded = (data.size() + kAlignment - 1) / kAlignment * kAlignment;
  if (scratch_bytes_ < padded) {
    scratch_.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlignment, padded)));
    scratch_bytes_ = scratch_ ? padded : 0;
    if (!scratch_) return ENOMEM;
  }
  if (!data.empty()) std::memcpy(scratch_.get(), data.data(), data.size());
  std::memset(scratch_.get() + data.size(), 0, padded - data.size());
  // A short write leaves the rest misaligned: the next write's EINVAL then
  // sends the whole file down the buffered path.
  for (size_t done = 0; done < padded;) {
    const ssize_t n = ::write(fd, scratch_.get() + done, padded - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += size_t(n);
  }
  if (padded != data.size() && ::ftruncate(fd, off_t(data.size())) != 0) return errno;
  return 0;
}

}  // namespace strata::tiered
