#pragma once
// S3Storage: RemoteStorage over the S3 REST API (AWS S3 and compatible stores: Ceph RGW,
// SeaweedFS, MinIO, s3proxy), with libcurl and its own SigV4 signing.
// How the interface's file-system shape maps onto a bucket:
// - A path is the key "<prefix>/<path>"; a directory is the common prefix "<key>/" of the keys
//   below it, so it exists exactly while it has objects, MkDirs has nothing to do, and List is a
//   ListObjectsV2 with the delimiter '/'.
// - Put is a single PUT up to multipart_threshold, a multipart upload above it (parts sent
//   `upload_parallelism` at a time, aborted on failure). An S3 object appears whole or not at all,
//   so no temporary name is needed. Multipart uploads older than orphan_upload_age (a broker that
//   died mid-upload) are aborted by a sweep that runs with the puts, at most hourly.
// - Get is a ranged GET. Delete of a directory (recursive) is DeleteObjects in batches of 1000.
// - Rename is a server-side copy then a delete (S3 has no rename; objects up to 5 GiB). Nothing
//   on the tiering path renames: manifests are per leader epoch and fenced in the metadata store.
// Errors: 404 kNotFound, 403 and a missing bucket kInvalidArgument, 412 kAlreadyExists, 416
// kOutOfRange, 5xx/SlowDown/throttling kUnavailable, transport failures as HttpClient maps them.
// Thread-safe; HTTP connections are pooled and kept alive.
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "tiered/aws_credentials.h"
#include "tiered/http_client.h"
#include "tiered/remote_storage.h"
#include "tiered/s3_options.h"
#include "tiered/s3_xml.h"

namespace strata::tiered {

class S3Storage final : public RemoteStorage {
 public:
  explicit S3Storage(S3Options options);

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

  // Aborts the multipart uploads under the prefix started more than `age` ago; returns how many.
  Result<int> AbortOrphanedUploads(std::chrono::milliseconds age, const CallOptions& opts);

  const S3Options& options() const { return opts_; }

 private:
  using Call = CallDeadline;

  std::string Key(std::string_view path) const;
  // The URL of `key` ("" = the bucket) with a canonical query ("" or "a=1&b=2", sorted).
  std::string Url(std::string_view key, std::string_view query) const;
  Call Begin(const CallOptions& opts) const;
  // One signed request; any status is returned (callers map the ones they expect).
  Result<HttpResponse> Send(const Call& call, HttpRequest req, std::string_view what);
  // Send, then statuses other than 2xx become Errors.
  Result<HttpResponse> SendOk(const Call& call, HttpRequest req, std::string_view what);
  Result<ObjectInfo> Head(const Call& call, const std::string& key, std::string name);
  Result<bool> HasChildren(const Call& call, const std::string& key);
  // ListObjectsV2 of `prefix` (delimited by '/' or not), every page in turn.
  Status ForEachListPage(const Call& call, const std::string& prefix, bool delimited,
                         const std::function<void(s3::ListPage&)>& visit);
  // Every key under `key_prefix` (no delimiter), all pages.
  Result<std::vector<std::string>> KeysUnder(const Call& call, const std::string& key_prefix);
  Status DeleteKeys(const Call& call, const std::vector<std::string>& keys);

  // Put's two ways (s3_upload.cc).
  Status PutWhole(const Call& call, const std::string& key, const PutSource& src, int fd,
                  uint64_t size);
  Status PutMultipart(const Call& call, const std::string& key, int fd, ByteView bytes,
                      uint64_t size);
  Status UploadParts(const Call& call, const std::string& key, const std::string& upload_id, int fd,
                     ByteView bytes, uint64_t size,
                     std::vector<std::pair<int, std::string>>& etags);
  void AbortUpload(const std::string& key, const std::string& upload_id);
  void MaybeSweepOrphans();

  S3Options opts_;
  AwsCredentialSource credentials_;
  std::string base_url_;     // scheme://host[:port] requests go to
  std::string bucket_path_;  // "/bucket" (path-style) or "" (virtual-hosted)
  HttpClient http_;
  std::atomic<int64_t> next_sweep_ms_{0};  // steady-clock ms of the next orphan sweep
};

// Errors of an S3 reply (status and <Error> body) as Errc, with the store's code and message.
Error MapS3Error(long status, ByteView body, std::string_view what);

}  // namespace strata::tiered
