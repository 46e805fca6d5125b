#include "base/env.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace strata {

namespace fs = std::filesystem;

namespace {

Error ErrnoError(std::string_view what, const fs::path& path, int err = errno) {
  Errc code = err == ENOENT ? Errc::kNotFound : Errc::kIoError;
  return MakeError(code, std::string(what) + " " + path.string() + ": " + std::strerror(err));
}

Status WriteAll(int fd, ByteView data, const fs::path& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("write", path);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(int fd, fs::path path, uint64_t size)
      : fd_(fd), path_(std::move(path)), size_(size) {}
  ~PosixWritableFile() override { ::close(fd_); }

  Status Append(ByteView data) override {
    STRATA_RETURN_IF_ERROR(WriteAll(fd_, data, path_));
    size_ += data.size();
    return Status::Ok();
  }
  Status Sync() override {
    if (::fdatasync(fd_) != 0) return ErrnoError("fdatasync", path_);
    return Status::Ok();
  }
  uint64_t size() const override { return size_; }

 private:
  int fd_;
  fs::path path_;
  uint64_t size_;
};

class PosixEnv : public Env {
 public:
  Result<std::unique_ptr<WritableFile>> OpenAppendable(const fs::path& path) override {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoError("open", path);
    off_t size = ::lseek(fd, 0, SEEK_END);
    if (size < 0) {
      Error e = ErrnoError("lseek", path);
      ::close(fd);
      return e;
    }
    return std::unique_ptr<WritableFile>(
        std::make_unique<PosixWritableFile>(fd, path, static_cast<uint64_t>(size)));
  }

  Status WriteFileAtomic(const fs::path& path, ByteView data) override {
    fs::path tmp = path;
    tmp += ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoError("open", tmp);
    Status st = WriteAll(fd, data, tmp);
    if (st.ok() && ::fsync(fd) != 0) st = ErrnoError("fsync", tmp);
    ::close(fd);
    if (!st.ok()) return st;
    if (::rename(tmp.c_str(), path.c_str()) != 0) return ErrnoError("rename", tmp);
    return SyncDir(path.parent_path());
  }

  Result<Bytes> ReadFile(const fs::path& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError("open", path);
    Bytes out;
    uint8_t buf[16384];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        Error e = ErrnoError("read", path);
        ::close(fd);
        return e;
      }
      if (n == 0) break;
      out.insert(out.end(), buf, buf + n);
    }
    ::close(fd);
    return out;
  }

  Status Truncate(const fs::path& path, uint64_t size) override {
    if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0)
      return ErrnoError("truncate", path);
    return Status::Ok();
  }

  Status RemoveFile(const fs::path& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoError("unlink", path);
    return Status::Ok();
  }

  Status CreateDirs(const fs::path& dir) override {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return MakeError(Errc::kIoError, "mkdir " + dir.string() + ": " + ec.message());
    return Status::Ok();
  }

  Status SyncDir(const fs::path& dir) override {
    int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return ErrnoError("open", dir);
    int rc = ::fsync(fd);
    ::close(fd);
    if (rc != 0) return ErrnoError("fsync", dir);
    return Status::Ok();
  }
};

// Appends through FaultInjectingEnv's byte budget.
class FaultyWritableFile : public WritableFile {
 public:
  FaultyWritableFile(FaultInjectingEnv* env, std::unique_ptr<WritableFile> base, fs::path path)
      : env_(env), base_(std::move(base)), path_(std::move(path)) {}

  Status Append(ByteView data) override {
    int64_t admitted = env_->Admit(data.size());
    if (admitted < 0) return base_->Append(data);
    if (env_->torn() && admitted > 0) {
      STRATA_RETURN_IF_ERROR(base_->Append(data.first(static_cast<size_t>(admitted))));
    }
    return ErrnoError("write", path_, ENOSPC);
  }
  Status Sync() override { return base_->Sync(); }
  uint64_t size() const override { return base_->size(); }

 private:
  FaultInjectingEnv* env_;
  std::unique_ptr<WritableFile> base_;
  fs::path path_;
};

}  // namespace

Env* Env::Default() {
  static PosixEnv env;
  return &env;
}

int64_t FaultInjectingEnv::Admit(size_t n) {
  int64_t left = bytes_left_.load();
  if (left < 0) return -1;
  if (static_cast<int64_t>(n) <= left) {
    bytes_left_ = left - static_cast<int64_t>(n);
    return -1;
  }
  bytes_left_ = 0;
  return left;
}

Result<std::unique_ptr<WritableFile>> FaultInjectingEnv::OpenAppendable(const fs::path& path) {
  STRATA_ASSIGN_OR_RETURN(auto base, base_->OpenAppendable(path));
  return std::unique_ptr<WritableFile>(
      std::make_unique<FaultyWritableFile>(this, std::move(base), path));
}

Status FaultInjectingEnv::WriteFileAtomic(const fs::path& path, ByteView data) {
  // A failed atomic replace leaves the old file: the temp file never renames.
  if (Admit(data.size()) >= 0) return ErrnoError("write", path.string() + ".tmp", ENOSPC);
  return base_->WriteFileAtomic(path, data);
}

}  // namespace strata
