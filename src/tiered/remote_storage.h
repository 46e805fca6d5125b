#pragma once
// RemoteStorage: the object-store-like interface every tiered-storage component uses to reach the
// cold tier (HDFS over WebHDFS, S3, a local directory). Paths are relative to the store's
// root
// ("topic-id/0/00000000000000000042.log"); no leading '/', no "." or ".." segments.
//
// Contract shared by all backends:
// - Put is atomic: a failed or interrupted Put never leaves a visible object. File stores upload
//   to a temporary name next to the target, check its length, then rename it into place; a
//   temporary left behind (IsTemporaryName) is hidden by List. S3 objects appear whole by nature.
// - Delete is idempotent: a missing path is success.
// - Stat of a missing path succeeds with exists == false; Get of a missing path is kNotFound.
// - Errors: kUnavailable (cannot connect, server 5xx, safe mode), kTimeout (deadline passed),
//   kIoError (transfer broke, length mismatch), kNotFound, kAlreadyExists, kInvalidArgument
//   (bad path, permission denied), kOutOfRange (read past the end), kShuttingDown (cancelled).
//   Retriable: kUnavailable, kTimeout, kIoError (see IsRetriable).
//
// Implementations are thread-safe: any number of calls may run concurrently.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "tiered/s3_options.h"

namespace strata::tiered {

// Set to true to make an in-flight call give up (with kShuttingDown) as soon as it can.
using CancelFlag = std::shared_ptr<std::atomic<bool>>;
inline CancelFlag MakeCancelFlag() { return std::make_shared<std::atomic<bool>>(false); }

// Per-call knobs. Every field is optional.
struct CallOptions {
  // Deadline for the whole call (all HTTP round trips of a Put); 0 = the store's default.
  std::chrono::milliseconds timeout{0};
  CancelFlag cancel;
  // Get only: nodes (DataNode hosts for WebHDFS) the read should avoid; used by hedged reads.
  std::vector<std::string> avoid_nodes;
  // Get only: called (from the thread doing the read) once the backend knows which node serves
  // it, before the data arrives. A hedged Get calls it once per read it starts.
  std::function<void(const std::string& node)> on_source;

  bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
};

// What Put uploads: a whole local file or a span of memory the caller keeps alive for the call.
struct PutSource {
  std::string file_path;  // used when non-empty
  ByteView bytes;

  static PutSource File(std::string path) { return PutSource{std::move(path), {}}; }
  static PutSource Memory(ByteView data) { return PutSource{{}, data}; }
  bool is_file() const { return !file_path.empty(); }
};

struct ObjectInfo {
  std::string name;  // Stat: the path asked for; List: the child's name within the directory
  bool exists = false;
  bool is_dir = false;
  uint64_t size = 0;
  int64_t mtime_ms = 0;
};

// Get: read to the end of the object.
inline constexpr uint64_t kToEnd = ~uint64_t{0};

class RemoteStorage {
 public:
  virtual ~RemoteStorage() = default;

  // Uploads src to path, replacing any object there; creates missing parent directories.
  virtual Status Put(std::string_view path, const PutSource& src, const CallOptions& opts) = 0;
  // Reads min(length, size - offset) bytes from offset; offset > size is kOutOfRange.
  virtual Result<Bytes> Get(std::string_view path, uint64_t offset, uint64_t length,
                            const CallOptions& opts) = 0;
  virtual Result<ObjectInfo> Stat(std::string_view path, const CallOptions& opts) = 0;
  // Children of a directory ("" = the root), sorted by name; a missing directory lists empty.
  virtual Result<std::vector<ObjectInfo>> List(std::string_view dir, const CallOptions& opts) = 0;
  // Removes a file or an (empty unless recursive) directory. Missing is success.
  virtual Status Delete(std::string_view path, bool recursive, const CallOptions& opts) = 0;
  virtual Status MkDirs(std::string_view path, const CallOptions& opts) = 0;
  // Moves src to dst; dst must not exist (kAlreadyExists) and its parent must exist.
  virtual Status Rename(std::string_view src, std::string_view dst, const CallOptions& opts) = 0;

  // Convenience overloads with default options.
  Status Put(std::string_view path, const PutSource& src) { return Put(path, src, {}); }
  Result<Bytes> Get(std::string_view path, uint64_t offset = 0, uint64_t length = kToEnd) {
    return Get(path, offset, length, {});
  }
  Result<ObjectInfo> Stat(std::string_view path) { return Stat(path, {}); }
  Result<std::vector<ObjectInfo>> List(std::string_view dir) { return List(dir, {}); }
  Status Delete(std::string_view path, bool recursive = false) {
    return Delete(path, recursive, {});
  }
  Status MkDirs(std::string_view path) { return MkDirs(path, {}); }
  Status Rename(std::string_view src, std::string_view dst) { return Rename(src, dst, {}); }
};

// True for errors worth retrying: the store may answer differently next time.
bool IsRetriable(Errc code);

// Checks a relative object path ("" allowed only when allow_root).
Status ValidatePath(std::string_view path, bool allow_root = false);

// The temporary name Put uploads to before renaming into place: "<dir>/.<name>.strata-tmp-<hex>".
std::string TemporaryNameFor(std::string_view path);
bool IsTemporaryName(std::string_view name);

// Options for OpenRemoteStorage.
struct RemoteStorageOptions {
  std::string user;  // WebHDFS user.name; empty = the process's user name
  std::chrono::milliseconds default_timeout{60000};
  std::chrono::milliseconds connect_timeout{3000};
  int max_idle_connections = 16;  // pooled HTTP handles kept per store
  S3Options s3;                   // for s3:// (bucket and prefix come from the URI)
};

// Opens a store for "file:///abs/dir", "webhdfs://host:port/abs/dir" or "s3://bucket/prefix". Bad
// URIs are kInvalidArgument; an unreachable store is not an error here (calls will fail instead).
Result<std::unique_ptr<RemoteStorage>> OpenRemoteStorage(std::string_view uri,
                                                         const RemoteStorageOptions& options = {});

}  // namespace strata::tiered
