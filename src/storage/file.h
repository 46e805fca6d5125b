#pragma once
// File: an open regular file accessed by position (pread/pwrite), plus the
// small filesystem helpers the storage layer shares (atomic replace, directory
// fsync: Env's, so there is one implementation; Kafka's 20-digit offset file
// names).
//
// Thread-safety: ReadAt may run concurrently with Append/Truncate (pread on a
// shared fd); mutating calls must be serialised by the owner. size() is
// atomic so a reader can observe the size without the owner's lock.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"

namespace strata::storage {

class File {
 public:
  // Opens `path` read-write, creating it when `create`; `truncate` empties it.
  static Result<std::unique_ptr<File>> Open(const std::filesystem::path& path, bool create,
                                            bool truncate = false);
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  // Reads up to out.size() bytes at `pos`; returns the count (short at EOF).
  Result<size_t> ReadAt(uint64_t pos, MutableByteView out) const;
  // Reads exactly `len` bytes at `pos` or fails with kCorrupt (short file).
  Result<Bytes> ReadExact(uint64_t pos, size_t len) const;
  // Writes `data` at the current end of file.
  Status Append(ByteView data);
  // Shrinks (or extends) the file to `size` bytes.
  Status Truncate(uint64_t size);
  Status Sync();
  // Last modification time in ms since the epoch (fstat).
  Result<int64_t> ModifiedMs() const;

  uint64_t size() const { return size_.load(std::memory_order_acquire); }
  const std::filesystem::path& path() const { return path_; }
  // For sendfile(2) of bytes below size(); valid while this File lives.
  int fd() const { return fd_; }

 private:
  File(int fd, std::filesystem::path path, uint64_t size);

  int fd_;
  std::filesystem::path path_;
  std::atomic<uint64_t> size_;
};

// Replaces `path` with `data` crash-safely: write <path>.tmp, fsync, rename,
// fsync the directory.
Status WriteFileAtomic(const std::filesystem::path& path, ByteView data);
// Reads a whole (small) file.
Result<Bytes> ReadWholeFile(const std::filesystem::path& path);
// fsyncs a directory so that creates, renames and unlinks in it are durable.
Status SyncDir(const std::filesystem::path& dir);
// Removes a file if present; kIoError only on a real failure.
Status RemoveFile(const std::filesystem::path& path);

// "<20-digit zero-padded offset><suffix>" as Kafka names segment files.
std::string OffsetFileName(int64_t offset, std::string_view suffix);
// The offset of a name produced by OffsetFileName with `suffix`, or nullopt.
std::optional<int64_t> ParseOffsetFileName(std::string_view name, std::string_view suffix);

// Builds an Errc::kIoError carrying strerror(errno).
Error IoError(std::string_view what, const std::filesystem::path& path);

}  // namespace strata::storage
