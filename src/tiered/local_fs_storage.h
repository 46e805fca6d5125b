#pragma once
// LocalFsStorage: RemoteStorage over a local (or locally mounted, e.g. NFS) directory. Used by
// tests, single-node set-ups and as the reference behaviour for other backends.
// Put writes through the Env's crash-safe replace (Env::ReplaceFile): a temporary file,
// fdatasynced, its length checked, renamed into place, the directory fsynced; tests pass a
// FaultInjectingEnv to fail it. Calls are plain blocking syscalls: CallOptions::timeout is not
// enforced, cancellation is checked between 1 MiB chunks. Thread-safe (no shared mutable state; Env
// is thread-safe).
#include <string>

#include "base/env.h"
#include "tiered/remote_storage.h"

namespace strata::tiered {

class LocalFsStorage final : public RemoteStorage {
 public:
  // root: absolute directory; created on the first Put/MkDirs if missing. `env` (not owned)
  // writes Put's objects and must outlive this store.
  explicit LocalFsStorage(std::string root, Env* env = Env::Default());

  using RemoteStorage::Delete;
  using RemoteStorage::Get;
  using RemoteStorage::List;
  using RemoteStorage::MkDirs;
  using RemoteStorage::Put;
  using RemoteStorage::Rename;
  using RemoteStorage::Stat;

  Status Put(std::string_view path, const PutSource& src, const CallOptions& opts) override;
  Result<Bytes> Get(std::string_view path, uint64_t offset, uint64_t length,
                    const CallOptions& opts) override;
  Result<ObjectInfo> Stat(std::string_view path, const CallOptions& opts) override;
  Result<std::vector<ObjectInfo>> List(std::string_view dir, const CallOptions& opts) override;
  Status Delete(std::string_view path, bool recursive, const CallOptions& opts) override;
  Status MkDirs(std::string_view path, const CallOptions& opts) override;
  Status Rename(std::string_view src, std::string_view dst, const CallOptions& opts) override;

  const std::string& root() const { return root_; }

 private:
  std::string FullPath(std::string_view path) const;

  std::string root_;
  Env* const env_;
};

}  // namespace strata::tiered
