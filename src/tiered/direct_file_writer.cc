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
    if (fd.valid()) return WriteDirect(fd.get(), path, data);
    if (errno != EINVAL) return ErrnoError(errno, "create", path);
    direct_ = false;  // not on this filesystem
  }
  UniqueFd fd(::open(path.c_str(), kFlags, 0644));
  if (!fd.valid()) return ErrnoError(errno, "create", path);
  return WriteAll(fd.get(), data, path);
}

Status DirectFileWriter::WriteDirect(int fd, const std::string& path, ByteView data) {
  const size_t padded = (data.size() + kAlignment - 1) / kAlignment * kAlignment;
  if (scratch_bytes_ < padded) {
    scratch_.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlignment, padded)));
    scratch_bytes_ = scratch_ ? padded : 0;
    if (!scratch_) return MakeError(Errc::kIoError, "no memory for a direct write of " + path);
  }
  if (!data.empty()) std::memcpy(scratch_.get(), data.data(), data.size());
  std::memset(scratch_.get() + data.size(), 0, padded - data.size());
  STRATA_RETURN_IF_ERROR(WriteAll(fd, ByteView(scratch_.get(), padded), path));
  if (padded != data.size() && ::ftruncate(fd, off_t(data.size())) != 0) {
    return ErrnoError(errno, "truncate", path);
  }
  return Status::Ok();
}

}  // namespace strata::tiered
