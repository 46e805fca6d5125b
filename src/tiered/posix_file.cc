#include "tiered/posix_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/file_region.h"

namespace strata::tiered {

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

Result<OpenedPutSource> OpenPutSource(const PutSource& src) {
  OpenedPutSource out;
  if (!src.is_file()) {
    out.size = src.bytes.size();
    return out;
  }
  out.fd = UniqueFd(::open(src.file_path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (!out.fd.valid() || ::fstat(out.fd.get(), &st) != 0) {
    return ErrnoError(errno, "open", src.file_path);
  }
  if (!S_ISREG(st.st_mode)) {
    return MakeError(Errc::kInvalidArgument, fmt::format("put: {} is not a file", src.file_path));
  }
  out.size = uint64_t(st.st_size);
  return out;
}

Error ErrnoError(int err, std::string_view what, std::string_view path) {
  Errc code = Errc::kIoError;
  switch (err) {
    case ENOENT:
      code = Errc::kNotFound;
      break;
    case EEXIST:
      code = Errc::kAlreadyExists;
      break;
    case EACCES:
    case EPERM:
    case ENOTDIR:
    case EISDIR:
    case ENOTEMPTY:
    case ENAMETOOLONG:
      code = Errc::kInvalidArgument;
      break;
    default:
      break;
  }
  return MakeError(code, fmt::format("{} {}: {}", what, path, std::strerror(err)));
}

Status WriteAll(int fd, ByteView data, std::string_view path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "write", path);
    }
    done += size_t(n);
  }
  return Status::Ok();
}

Status PreadExact(int fd, uint64_t pos, MutableByteView out, std::string_view path) {
  const int error = PreadAll(fd, pos, out.data(), out.size());
  if (error == EIO) return MakeError(Errc::kIoError, fmt::format("read {}: file shrank at {}", path, pos));
  if (error != 0) return ErrnoError(error, "read", path);
  return Status::Ok();
}

Status MakeDirs(const std::string& dir) {
  std::string cur;
  size_t i = 0;
  while (i <= dir.size()) {
    size_t j = dir.find('/', i);
    if (j == std::string::npos) j = dir.size();
    cur = dir.substr(0, j);
    if (!cur.empty() && ::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError(errno, "mkdir", cur);
    }
    i = j + 1;
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return ErrnoError(errno, "stat", dir);
  if (!S_ISDIR(st.st_mode)) {
    return MakeError(Errc::kAlreadyExists, fmt::format("mkdir {}: a file is in the way", dir));
  }
  return Status::Ok();
}

}  // namespace strata::tiered
