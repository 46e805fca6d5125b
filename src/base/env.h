#pragma once
// Env: the file-system seam for every local write that must survive a crash
// (as LevelDB's Env). Code that writes state files, journals or checkpoints
// takes an Env*, so tests can make the disk fail (full, torn writes) with
// FaultInjectingEnv instead of hoping for it.
//
// Thread-safety: Env methods are safe from any thread; one WritableFile is
// used by one thread at a time.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "base/bytes.h"
#include "base/result.h"

namespace strata {

// A file written at its end (journals, logs being built).
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(ByteView data) = 0;
  virtual Status Sync() = 0;  // fdatasync: data durable on return
  virtual uint64_t size() const = 0;
};

class Env {
 public:
  virtual ~Env() = default;

  // The real POSIX file system.
  static Env* Default();

  // Opens `path` for appending, creating it if absent.
  virtual Result<std::unique_ptr<WritableFile>> OpenAppendable(
      const std::filesystem::path& path) = 0;
  // Creates `path` empty (truncating it if present) for appending.
  virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::filesystem::path& path) = 0;
  // rename(2): atomically replaces `to` if present; durable after SyncDir.
  virtual Status RenameFile(const std::filesystem::path& from, const std::filesystem::path& to) = 0;
  // The whole file; kNotFound when absent.
  virtual Result<Bytes> ReadFile(const std::filesystem::path& path) = 0;
  virtual Status Truncate(const std::filesystem::path& path, uint64_t size) = 0;
  virtual Status RemoveFile(const std::filesystem::path& path) = 0;  // absent is fine
  virtual Status CreateDirs(const std::filesystem::path& dir) = 0;
  // Makes creates, renames and unlinks in `dir` durable.
  virtual Status SyncDir(const std::filesystem::path& dir) = 0;

  // The one crash-safe replace, built on the primitives above so that every
  // Env (and every fault a FaultInjectingEnv injects) shares it: `fill`
  // writes a fresh `tmp` (same directory as `path`), which is fdatasynced,
  // closed, renamed over `path`, and the directory fsynced. Readers see the
  // old or the new bytes, never a mix. On failure before the rename `tmp` is
  // removed and `path` is untouched.
  Status ReplaceFile(const std::filesystem::path& path, const std::filesystem::path& tmp,
                     const std::function<Status(WritableFile&)>& fill);
  // ReplaceFile with `data` through <path>.tmp.
  Status WriteFileAtomic(const std::filesystem::path& path, ByteView data);
};

// An Env over another that fails on command: after `bytes_left` more bytes
// every write fails with ENOSPC's error, and with `torn` the write that
// crosses the limit lands in part first (as a crash mid-write leaves it);
// FailDirSyncs makes SyncDir fail with EIO's error. Tests only.
class FaultInjectingEnv : public Env {
 public:
  explicit FaultInjectingEnv(Env* base) : base_(base) {}

  // Writes fail once `bytes` more have been written (-1 = never).
  void FailAfterBytes(int64_t bytes, bool torn = false) {
    torn_ = torn;
    bytes_left_ = bytes;
  }
  void FailDirSyncs(bool fail) { fail_dir_syncs_ = fail; }
  void Heal() {
    bytes_left_ = -1;
    fail_dir_syncs_ = false;
  }

  Result<std::unique_ptr<WritableFile>> OpenAppendable(const std::filesystem::path& path) override;
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::filesystem::path& path) override;
  Status RenameFile(const std::filesystem::path& from, const std::filesystem::path& to) override {
    return base_->RenameFile(from, to);
  }
  Result<Bytes> ReadFile(const std::filesystem::path& path) override {
    return base_->ReadFile(path);
  }
  Status Truncate(const std::filesystem::path& path, uint64_t size) override {
    return base_->Truncate(path, size);
  }
  Status RemoveFile(const std::filesystem::path& path) override { return base_->RemoveFile(path); }
  Status CreateDirs(const std::filesystem::path& dir) override { return base_->CreateDirs(dir); }
  Status SyncDir(const std::filesystem::path& dir) override;

  // How many bytes of a write of `n` may land; -1 = all. Internal.
  int64_t Admit(size_t n);
  bool torn() const { return torn_; }

 private:
  Env* base_;
  std::atomic<int64_t> bytes_left_{-1};
  std::atomic<bool> torn_{false};
  std::atomic<bool> fail_dir_syncs_{false};
};

}  // namespace strata
