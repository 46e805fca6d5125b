// S3Storage's uploads: a single PUT, or a multipart upload whose parts go up several at a time,
// and the sweep that aborts the multipart uploads a dead broker left behind.
#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include "tiered/logger.h"
#include "tiered/posix_file.h"
#include "tiered/s3_storage.h"
#include "tiered/s3_xml.h"

namespace strata::tiered {

using std::chrono::milliseconds;

namespace {

constexpr milliseconds kAbortTimeout{10000};
constexpr milliseconds kSweepInterval{std::chrono::hours(1)};

int64_t SteadyMs() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t WallMs() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Status S3Storage::Put(std::string_view path, const PutSource& src, const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path));
  Call call = Begin(opts);
  STRATA_ASSIGN_OR_RETURN(OpenedPutSource source, OpenPutSource(src));
  MaybeSweepOrphans();
  const std::string key = Key(path);
  if (source.size <= opts_.multipart_threshold) {
    return PutWhole(call, key, src, source.fd.get(), source.size);
  }
  return PutMultipart(call, key, source.fd.get(), src.bytes, source.size);
}

Status S3Storage::PutWhole(const Call& call, const std::string& key, const PutSource& src, int fd,
                           uint64_t size) {
  HttpRequest req;
  req.method = HttpRequest::Method::kPut;
  req.url = Url(key, "");
  if (fd >= 0) {
    req.body_fd = fd;
    req.body_size = size;
  } else {
    req.body = src.bytes;
  }
  auto resp = SendOk(call, std::move(req), "PUT " + key);
  return resp.ok() ? Status::Ok() : Status(resp.take_error());
}

Status S3Storage::PutMultipart(const Call& call, const std::string& key, int fd, ByteView bytes,
                               uint64_t size) {
  HttpRequest start;
  start.method = HttpRequest::Method::kPost;
  start.url = Url(key, "uploads=");
  STRATA_ASSIGN_OR_RETURN(HttpResponse started,
                          SendOk(call, std::move(start), "START UPLOAD " + key));
  STRATA_ASSIGN_OR_RETURN(std::string upload_id, s3::ParseUploadId(s3::AsText(started.body)));
  std::vector<std::pair<int, std::string>> etags;
  Status st = UploadParts(call, key, upload_id, fd, bytes, size, etags);
  if (st.ok()) {
    const std::string body = s3::CompleteMultipartBody(etags);
    HttpRequest complete;
    complete.method = HttpRequest::Method::kPost;
    complete.url = Url(key, "uploadId=" + UrlEncode(upload_id, false));
    complete.body = ByteView(reinterpret_cast<const uint8_t*>(body.data()), body.size());
    complete.headers.push_back("Content-Type: application/xml");
    const std::string what = "COMPLETE UPLOAD " + key;
    auto resp = SendOk(call, std::move(complete), what);
    if (!resp.ok()) {
      st = resp.take_error();
    } else {
      // CompleteMultipartUpload may answer 200 and then an error in the body.
      const s3::ErrorDocument late = s3::ParseError(s3::AsText(resp->body));
      if (!late.code.empty()) {
        st = MakeError(Errc::kUnavailable, fmt::format("{}: {} {}", what, late.code, late.message));
      }
    }
  }
  if (!st.ok()) AbortUpload(key, upload_id);
  return st;
}

Status S3Storage::UploadParts(const Call& call, const std::string& key,
                              const std::string& upload_id, int fd, ByteView bytes, uint64_t size,
                              std::vector<std::pair<int, std::string>>& etags) {
  const uint64_t part_size = opts_.part_size;
  const int parts = int((size + part_size - 1) / part_size);
  etags.assign(size_t(parts), {});
  std::mutex mu;
  int next = 0;  // guarded by mu
  Status first_error = Status::Ok();
  auto worker = [&] {
    for (;;) {
      int index;
      {
        std::lock_guard lock(mu);
        if (!first_error.ok() || next == parts) return;
        index = next++;
      }
      const uint64_t offset = uint64_t(index) * part_size;
      const uint64_t length = std::min(part_size, size - offset);
      HttpRequest req;
      req.method = HttpRequest::Method::kPut;
      req.url = Url(
          key, fmt::format("partNumber={}&uploadId={}", index + 1, UrlEncode(upload_id, false)));
      if (fd >= 0) {
        req.body_fd = fd;
        req.body_offset = offset;
        req.body_size = length;
      } else {
        req.body = bytes.subspan(size_t(offset), size_t(length));
      }
      const std::string what = fmt::format("PUT {} part {} of {}", key, index + 1, parts);
      auto resp = SendOk(call, std::move(req), what);
      Status st = Status::Ok();
      if (!resp.ok()) {
        st = resp.take_error();
      } else if (resp->Header("etag").empty()) {
        st = MakeError(Errc::kIoError, what + ": no ETag in the reply");
      }
      std::lock_guard lock(mu);
      if (!st.ok()) {
        if (first_error.ok()) first_error = std::move(st);
        return;
      }
      etags[size_t(index)] = {index + 1, std::string(resp->Header("etag"))};
    }
  };
  const int threads = std::min(opts_.upload_parallelism, parts);
  std::vector<std::thread> helpers;
  for (int i = 1; i < threads; ++i) helpers.emplace_back(worker);
  worker();
  for (std::thread& t : helpers) t.join();
  return first_error;
}

void S3Storage::AbortUpload(const std::string& key, const std::string& upload_id) {
  const Call cleanup = CallDeadline::In(kAbortTimeout);
  HttpRequest req;
  req.method = HttpRequest::Method::kDelete;
  req.url = Url(key, "uploadId=" + UrlEncode(upload_id, false));
  auto resp = SendOk(cleanup, std::move(req), "ABORT UPLOAD " + key);
  if (!resp.ok()) {
    Log()->warn("{} (the orphan sweep retries it later)", resp.error().message);
  }
}

Result<int> S3Storage::AbortOrphanedUploads(milliseconds age, const CallOptions& opts) {
  Call call = Begin(opts);
  const std::string prefix = opts_.prefix.empty() ? opts_.prefix : opts_.prefix + "/";
  const int64_t before = WallMs() - age.count();
  std::vector<s3::MultipartUpload> orphans;
  std::string key_marker;
  std::string id_marker;
  for (;;) {
    std::string query;
    if (!key_marker.empty()) query = "key-marker=" + UrlEncode(key_marker, false) + "&";
    query += "prefix=" + UrlEncode(prefix, false) + "&";
    if (!id_marker.empty()) query += "upload-id-marker=" + UrlEncode(id_marker, false) + "&";
    query += "uploads=";
    HttpRequest req;
    req.url = Url("", query);
    STRATA_ASSIGN_OR_RETURN(HttpResponse resp,
                            SendOk(call, std::move(req), "LIST UPLOADS " + prefix));
    STRATA_ASSIGN_OR_RETURN(s3::UploadsPage page, s3::ParseUploadsPage(s3::AsText(resp.body)));
    for (s3::MultipartUpload& u : page.uploads) {
      if (u.initiated_ms <= before) orphans.push_back(std::move(u));
    }
    if (!page.truncated || page.next_key_marker.empty()) break;
    key_marker = page.next_key_marker;
    id_marker = page.next_upload_id_marker;
  }
  for (const s3::MultipartUpload& u : orphans) {
    Log()->info("aborting multipart upload {} of {}, started {} s ago", u.upload_id, u.key,
                (WallMs() - u.initiated_ms) / 1000);
    AbortUpload(u.key, u.upload_id);
  }
  return int(orphans.size());
}

void S3Storage::MaybeSweepOrphans() {
  const int64_t now = SteadyMs();
  int64_t due = next_sweep_ms_.load();
  if (now < due) return;
  if (!next_sweep_ms_.compare_exchange_strong(due, now + kSweepInterval.count())) return;
  CallOptions opts;
  opts.timeout = milliseconds(30000);
  auto swept = AbortOrphanedUploads(opts_.orphan_upload_age, opts);
  if (!swept.ok()) {
    Log()->warn("sweeping orphaned multipart uploads: {}", swept.error().message);
    next_sweep_ms_.store(now + milliseconds(60000).count());  // sooner than an hour
  }
}

}  // namespace strata::tiered
