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

// Opens `path` with `flags` (plus O_WRONLY | O_CREAT | O_APPEND) for appending.
Result<std::unique_ptr<WritableFile>> OpenForAppend(const fs::path& path, int flags) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | flags, 0644);
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

class PosixEnv : public Env {
 public:
  Result<std::unique_ptr<WritableFile>> OpenAppendable(const fs::path& path) override {
    return OpenForAppend(path, 0);
  }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const fs::path& path) override {
    return OpenForAppend(path, O_TRUNC);
  }

  Status RenameFile(const fs::path& from, const fs::path& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return ErrnoError("rename", from);
    return Status::Ok();
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

Status Env::ReplaceFile(const fs::path& path, const fs::path& tmp,
                        const std::function<Status(WritableFile&)>& fill) {
  Status st = [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, NewWritableFile(tmp));
    STRATA_RETURN_IF_ERROR(fill(*file));
    return file->Sync();
  }();  // the temp file is closed here, before the rename
  if (st.ok()) st = RenameFile(tmp, path);
  if (!st.ok()) {
    // Best effort: the error that matters is `st`, and a leftover temp file
    // is never read (the next replace truncates it).
    (void)RemoveFile(tmp);
    return st;
  }
  return SyncDir(path.parent_path());
}

Status Env::WriteFileAtomic(const fs::path& path, ByteView data) {
  fs::path tmp = path;
  tmp += ".tmp";
  return ReplaceFile(path, tmp, [data](WritableFile& file) { return file.Append(data); });
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

Result<std::unique_ptr<WritableFile>> FaultInjectingEnv::NewWritableFile(const fs::path& path) {
  STRATA_ASSIGN_OR_RETURN(auto base, base_->NewWritableFile(path));
  return std::unique_ptr<WritableFile>(
      std::make_unique<FaultyWritableFile>(this, std::move(base), path));
}

Status FaultInjectingEnv::SyncDir(const fs::path& dir) {
  if (fail_dir_syncs_) return ErrnoError("fsync", dir, EIO);
  return base_->SyncDir(dir);
}

}  // namespace strata
