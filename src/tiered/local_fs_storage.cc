#include "tiered/local_fs_storage.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "tiered/posix_file.h"

namespace strata::tiered {
namespace {

constexpr size_t kChunk = 1 << 20;

Error Cancelled(std::string_view path) {
  return MakeError(Errc::kShuttingDown, fmt::format("put {}: cancelled", path));
}

std::string ParentOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

int64_t MtimeMs(const struct stat& st) {
  return int64_t(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

// Copies the source into `out` in chunks; returns the byte count written.
Result<uint64_t> CopySource(const PutSource& src, WritableFile& out, const std::string& tmp,
                            const CallOptions& opts) {
  if (!src.is_file()) {
    uint64_t done = 0;
    while (done < src.bytes.size()) {
      if (opts.cancelled()) return Cancelled(tmp);
      size_t n = std::min(kChunk, src.bytes.size() - done);
      STRATA_RETURN_IF_ERROR(out.Append(src.bytes.subspan(done, n)));
      done += n;
    }
    return done;
  }
  UniqueFd in(::open(src.file_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return ErrnoError(errno, "open", src.file_path);
  Bytes buf(kChunk);
  uint64_t done = 0;
  for (;;) {
    if (opts.cancelled()) return Cancelled(tmp);
    ssize_t n = ::read(in.get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "read", src.file_path);
    }
    if (n == 0) return done;
    STRATA_RETURN_IF_ERROR(out.Append(ByteView(buf.data(), size_t(n))));
    done += uint64_t(n);
  }
}

// The size Put must end up with: the file's size when the upload starts, or the span's.
Result<uint64_t> SourceSize(const PutSource& src) {
  if (!src.is_file()) return uint64_t(src.bytes.size());
  struct stat st;
  if (::stat(src.file_path.c_str(), &st) != 0) return ErrnoError(errno, "stat", src.file_path);
  if (!S_ISREG(st.st_mode)) {
    return MakeError(Errc::kInvalidArgument, fmt::format("put: {} is not a file", src.file_path));
  }
  return uint64_t(st.st_size);
}

// Fills the temporary file with the whole source; Env::ReplaceFile syncs and renames it.
Status FillTemp(const PutSource& src, WritableFile& out, const std::string& tmp, uint64_t expected,
                const CallOptions& opts) {
  STRATA_ASSIGN_OR_RETURN(uint64_t written, CopySource(src, out, tmp, opts));
  if (written != expected || out.size() != expected) {
    return MakeError(Errc::kIoError, fmt::format("put {}: wrote {} bytes, file has {}, expected {}",
                                                 tmp, written, out.size(), expected));
  }
  return Status::Ok();
}

}  // namespace

LocalFsStorage::LocalFsStorage(std::string root, Env* env) : root_(std::move(root)), env_(env) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string LocalFsStorage::FullPath(std::string_view path) const {
  if (path.empty()) return root_;
  return root_ == "/" ? fmt::format("/{}", path) : fmt::format("{}/{}", root_, path);
}

Status LocalFsStorage::Put(std::string_view path, const PutSource& src, const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path));
  std::string full = FullPath(path);
  std::string dir = ParentOf(full);
  STRATA_ASSIGN_OR_RETURN(uint64_t expected, SourceSize(src));
  STRATA_RETURN_IF_ERROR(MakeDirs(dir));
  // The Env reports errno as kIoError (retriable); a directory we may not write to is the
  // caller's mistake (kInvalidArgument, as the RemoteStorage contract says), so check first.
  if (::access(dir.c_str(), W_OK) != 0) return ErrnoError(errno, "put", dir);
  std::string tmp = TemporaryNameFor(full);
  // A failed Put removes its temporary file and never touches `full`.
  return env_->ReplaceFile(
      full, tmp, [&](WritableFile& out) { return FillTemp(src, out, tmp, expected, opts); });
}

Result<Bytes> LocalFsStorage::Get(std::string_view path, uint64_t offset, uint64_t length,
                                  const CallOptions& /*opts*/) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path));
  std::string full = FullPath(path);
  UniqueFd fd(::open(full.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, "open", full);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoError(errno, "fstat", full);
  if (!S_ISREG(st.st_mode)) {
    return MakeError(Errc::kInvalidArgument, fmt::format("get {}: not a file", full));
  }
  uint64_t size = uint64_t(st.st_size);
  if (offset > size) {
    return MakeError(Errc::kOutOfRange,
                     fmt::format("get {}: offset {} > size {}", full, offset, size));
  }
  Bytes out(std::min(length, size - offset));
  STRATA_RETURN_IF_ERROR(PreadExact(fd.get(), offset, out, full));
  return out;
}

Result<ObjectInfo> LocalFsStorage::Stat(std::string_view path, const CallOptions& /*opts*/) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path, /*allow_root=*/true));
  std::string full = FullPath(path);
  ObjectInfo info;
  info.name = std::string(path);
  struct stat st;
  if (::stat(full.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return info;
    return ErrnoError(errno, "stat", full);
  }
  info.exists = true;
  info.is_dir = S_ISDIR(st.st_mode);
  info.size = info.is_dir ? 0 : uint64_t(st.st_size);
  info.mtime_ms = MtimeMs(st);
  return info;
}

Result<std::vector<ObjectInfo>> LocalFsStorage::List(std::string_view dir,
                                                     const CallOptions& /*opts*/) {
  STRATA_RETURN_IF_ERROR(ValidatePath(dir, /*allow_root=*/true));
  std::string full = FullPath(dir);
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(full.c_str()), ::closedir);
  std::vector<ObjectInfo> out;
  if (!d) {
    if (errno == ENOENT) return out;
    return ErrnoError(errno, "list", full);
  }
  while (struct dirent* e = ::readdir(d.get())) {
    std::string_view name = e->d_name;
    if (name == "." || name == ".." || IsTemporaryName(name)) continue;
    struct stat st;
    if (::fstatat(::dirfd(d.get()), e->d_name, &st, 0) != 0) continue;  // raced with a delete
    ObjectInfo info;
    info.name = std::string(name);
    info.exists = true;
    info.is_dir = S_ISDIR(st.st_mode);
    info.size = info.is_dir ? 0 : uint64_t(st.st_size);
    info.mtime_ms = MtimeMs(st);
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

Status LocalFsStorage::Delete(std::string_view path, bool recursive, const CallOptions& /*opts*/) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path));
  std::string full = FullPath(path);
  if (recursive) {
    std::error_code ec;
    std::filesystem::remove_all(full, ec);
    if (ec) return ErrnoError(ec.value(), "delete", full);
    return Status::Ok();
  }
  if (::unlink(full.c_str()) == 0 || errno == ENOENT || errno == ENOTDIR) return Status::Ok();
  if (errno != EISDIR && errno != EPERM) return ErrnoError(errno, "delete", full);
  if (::rmdir(full.c_str()) == 0 || errno == ENOENT) return Status::Ok();
  return ErrnoError(errno, "delete", full);
}

Status LocalFsStorage::MkDirs(std::string_view path, const CallOptions& /*opts*/) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path, /*allow_root=*/true));
  return MakeDirs(FullPath(path));
}

Status LocalFsStorage::Rename(std::string_view src, std::string_view dst,
                              const CallOptions& /*opts*/) {
  STRATA_RETURN_IF_ERROR(ValidatePath(src));
  STRATA_RETURN_IF_ERROR(ValidatePath(dst));
  std::string from = FullPath(src);
  std::string to = FullPath(dst);
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    return env_->SyncDir(ParentOf(to));
  }
  int err = errno;
  if (err == ENOENT && ::access(from.c_str(), F_OK) == 0) {
    return MakeError(Errc::kNotFound, fmt::format("rename to {}: parent directory missing", to));
  }
  return ErrnoError(err, "rename", fmt::format("{} -> {}", from, to));
}

}  // namespace strata::tiered
