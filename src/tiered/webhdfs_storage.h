#pragma once
// WebHdfsStorage: RemoteStorage over HDFS's WebHDFS REST API (libcurl, no JVM).
// - Put: CREATE on the NameNode (307 to a DataNode, followed by hand so the body is re-sent there),
//   GETFILESTATUS to confirm the length, then RENAME (overwrite) of the temporary into place.
// - Get: OPEN with offset/length, redirect followed by hand; CallOptions::avoid_nodes becomes
//   excludedatanodes and CallOptions::on_source is told the DataNode host (for hedged reads).
// - user.name is sent on every call. RemoteException replies map to Errc (webhdfs_errors.h).
// Each call has a deadline (CallOptions::timeout or the default) spanning all its round trips.
// Thread-safe; HTTP connections are pooled.
#include <chrono>
#include <functional>
#include <string>

#include "tiered/http_client.h"
#include "tiered/remote_storage.h"
#include "tiered/webhdfs_redirects.h"

namespace strata::tiered {

struct WebHdfsOptions {
  std::string host;
  int port = 9870;         // NameNode HTTP port
  std::string root = "/";  // absolute HDFS directory all paths are relative to
  std::string user;        // user.name; empty = the process's user name
  std::chrono::milliseconds default_timeout{60000};
  std::chrono::milliseconds connect_timeout{3000};
  // A transfer with no progress for this long fails with kTimeout (a hung DataNode), even when
  // the call's deadline is far away. Whole seconds; 0 = off.
  std::chrono::milliseconds stall_timeout{20000};
  int max_idle_connections = 16;
  int replication = 0;      // CREATE replication; 0 = the cluster's default
  uint64_t block_size = 0;  // CREATE blocksize; 0 = the cluster's default
};

class WebHdfsStorage final : public RemoteStorage {
 public:
  explicit WebHdfsStorage(WebHdfsOptions options);

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

  const std::string& user() const { return opts_.user; }
  // Reads sent straight to the DataNode a file was read from before.
  uint64_t redirects_reused() const { return redirects_.reused(); }

 private:
  using Call = CallDeadline;

  std::string AbsPath(std::string_view rel) const;
  std::string Url(const std::string& abs_path, std::string_view op, std::string_view extra) const;
  Call Begin(const CallOptions& opts) const;
  // One request; a reply other than `expect` becomes an Error (RemoteException mapped).
  Result<HttpResponse> Send(const Call& call, HttpRequest req, long expect, std::string_view what);
  // Sends to the NameNode (without a body), expects a 307, tells on_datanode where it points,
  // then sends the request (with its body) to that DataNode (its URL in *datanode_url if given).
  Result<HttpResponse> SendRedirected(const Call& call, HttpRequest req, long expect,
                                      std::string_view what,
                                      const std::function<void(const std::string&)>& on_datanode,
                                      std::string* datanode_url = nullptr);
  // OPEN: straight to the DataNode the file was last read from, else (or when that fails)
  // through the NameNode's redirect; `avoid` passes opts.avoid_nodes as excludedatanodes and
  // skips a remembered DataNode among them.
  Result<Bytes> Open(const Call& call, const std::string& abs, uint64_t offset, uint64_t length,
                     const CallOptions& opts, bool avoid);
  // The OPEN of a remembered DataNode URL; nullopt when there is none to use.
  std::optional<Result<HttpResponse>> OpenAtRememberedDataNode(const Call& call,
                                                               const std::string& abs,
                                                               uint64_t offset, uint64_t length,
                                                               const CallOptions& opts, bool avoid,
                                                               std::string_view what);
  Status Upload(const Call& call, const std::string& abs, const PutSource& src, int fd,
                uint64_t size);
  Result<ObjectInfo> StatAbs(const Call& call, const std::string& abs, std::string name);
  Status RenameAbs(const Call& call, const std::string& from, const std::string& to,
                   bool overwrite);
  Status DeleteAbs(const Call& call, const std::string& abs, bool recursive);

  WebHdfsOptions opts_;
  std::string base_url_;  // http://host:port/webhdfs/v1
  HttpClient http_;
  WebHdfsRedirects redirects_;
};

}  // namespace strata::tiered
