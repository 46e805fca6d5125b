#include "storage/file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/env.h"

namespace strata::storage {

namespace fs = std::filesystem;

Error IoError(std::string_view what, const fs::path& path) {
  return MakeError(Errc::kIoError,
                   fmt::format("{} {}: {}", what, path.string(), std::strerror(errno)));
}

File::File(int fd, fs::path path, uint64_t size) : fd_(fd), path_(std::move(path)), size_(size) {}

File::~File() { ::close(fd_); }

Result<std::unique_ptr<File>> File::Open(const fs::path& path, bool create, bool truncate) {
  int flags = O_RDWR | O_CLOEXEC;
  if (create) flags |= O_CREAT;
  if (truncate) flags |= O_TRUNC;
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return IoError("open", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Error e = IoError("fstat", path);
    ::close(fd);
    return e;
  }
  return std::unique_ptr<File>(new File(fd, path, static_cast<uint64_t>(st.st_size)));
}

Result<size_t> File::ReadAt(uint64_t pos, MutableByteView out) const {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(pos + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("pread", path_);
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

Result<Bytes> File::ReadExact(uint64_t pos, size_t len) const {
  Bytes buf(len);
  STRATA_ASSIGN_OR_RETURN(size_t n, ReadAt(pos, buf));
  if (n != len) {
    return MakeError(Errc::kCorrupt, fmt::format("{}: wanted {} bytes at {}, file has {}",
                                                 path_.string(), len, pos, pos + n));
  }
  return buf;
}

Status File::Append(ByteView data) {
  uint64_t pos = size();
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n =
        ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(pos + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("pwrite", path_);
    }
    done += static_cast<size_t>(n);
  }
  size_.store(pos + data.size(), std::memory_order_release);
  return Status::Ok();
}

Status File::Truncate(uint64_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return IoError("ftruncate", path_);
  size_.store(size, std::memory_order_release);
  return Status::Ok();
}

Status File::Sync() {
  if (::fsync(fd_) != 0) return IoError("fsync", path_);
  return Status::Ok();
}

Result<int64_t> File::ModifiedMs() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return IoError("fstat", path_);
  return int64_t(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

// The crash-safe helpers are the Env's (one implementation, one fault seam).
Status SyncDir(const fs::path& dir) { return Env::Default()->SyncDir(dir); }

Status WriteFileAtomic(const fs::path& path, ByteView data) {
  return Env::Default()->WriteFileAtomic(path, data);
}

Result<Bytes> ReadWholeFile(const fs::path& path) { return Env::Default()->ReadFile(path); }

Status RemoveFile(const fs::path& path) { return Env::Default()->RemoveFile(path); }

std::string OffsetFileName(int64_t offset, std::string_view suffix) {
  return fmt::format("{:020d}{}", offset, suffix);
}

std::optional<int64_t> ParseOffsetFileName(std::string_view name, std::string_view suffix) {
  if (name.size() != 20 + suffix.size() || name.substr(20) != suffix) return std::nullopt;
  int64_t value = 0;
  for (char c : name.substr(0, 20)) {
    if (c < '0' || c > '9') return std::nullopt;
    if (value > (INT64_MAX - (c - '0')) / 10) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace strata::storage
