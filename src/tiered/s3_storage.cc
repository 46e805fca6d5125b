#include "tiered/s3_storage.h"

#include <curl/curl.h>
#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <charconv>

#include "tiered/logger.h"
#include "tiered/s3_xml.h"

namespace strata::tiered {

using std::chrono::milliseconds;

namespace {

constexpr size_t kDeleteBatch = 1000;  // DeleteObjects' limit

ByteView AsBytes(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

bool Is2xx(long status) { return status >= 200 && status < 300; }

// Base64 of the body's MD5: DeleteObjects refuses a body without it.
std::string ContentMd5(std::string_view body) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(body.data(), body.size(), digest, &len, EVP_md5(), nullptr);
  unsigned char encoded[64];
  const int n = EVP_EncodeBlock(encoded, digest, int(len));
  return std::string(reinterpret_cast<char*>(encoded), size_t(n));
}

std::string WithoutTrailingSlashes(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

std::string WithoutSlashesAround(std::string_view s) {
  while (!s.empty() && s.front() == '/') s.remove_prefix(1);
  while (!s.empty() && s.back() == '/') s.remove_suffix(1);
  return std::string(s);
}

int64_t HttpDateMs(std::string_view date) {
  if (date.empty()) return 0;
  const time_t t = curl_getdate(std::string(date).c_str(), nullptr);
  return t < 0 ? 0 : int64_t(t) * 1000;
}

}  // namespace

Error MapS3Error(long status, ByteView body, std::string_view what) {
  const s3::ErrorDocument doc = s3::ParseError(s3::AsText(body));
  Errc code = Errc::kIoError;
  if (status == 404) {
    code = doc.code == "NoSuchBucket" ? Errc::kInvalidArgument : Errc::kNotFound;
  } else if (status == 401 || status == 403 || status == 405) {
    code = Errc::kInvalidArgument;
  } else if (status == 412) {
    code = Errc::kAlreadyExists;
  } else if (status == 416) {
    code = Errc::kOutOfRange;
  } else if (status == 400) {
    code = doc.code == "RequestTimeout" ? Errc::kTimeout : Errc::kInvalidArgument;
  } else if (status == 409 || status == 429 || status >= 500) {
    code = Errc::kUnavailable;  // a conflicting request in progress, throttling, the store's own
  }
  std::string detail = doc.code.empty() ? std::string() : " " + doc.code;
  if (!doc.message.empty()) detail += ": " + doc.message;
  return MakeError(code, fmt::format("{}: HTTP {}{}", what, status, detail));
}

S3Storage::S3Storage(S3Options options)
    : opts_(std::move(options)),
      credentials_(opts_.credentials.access_key_id.empty()
                       ? AwsCredentialSource::FromEnvironment()
                       : AwsCredentialSource::Fixed(opts_.credentials)),
      http_(opts_.max_idle_connections) {
  opts_.prefix = WithoutSlashesAround(opts_.prefix);
  std::string endpoint = WithoutTrailingSlashes(opts_.endpoint);
  if (endpoint.empty()) endpoint = fmt::format("https://s3.{}.amazonaws.com", opts_.region);
  if (opts_.path_style) {
    base_url_ = endpoint;
    bucket_path_ = "/" + opts_.bucket;
  } else {
    const size_t scheme_end = endpoint.find("://");
    const size_t host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
    base_url_ = endpoint.substr(0, host_start) + opts_.bucket + "." + endpoint.substr(host_start);
  }
  opts_.part_size = std::max<uint64_t>(opts_.part_size, 5ull << 20);
  opts_.upload_parallelism = std::max(1, opts_.upload_parallelism);
}

std::string S3Storage::Key(std::string_view path) const {
  if (opts_.prefix.empty()) return std::string(path);
  if (path.empty()) return opts_.prefix;
  return opts_.prefix + "/" + std::string(path);
}

std::string S3Storage::Url(std::string_view key, std::string_view query) const {
  std::string url = base_url_ + bucket_path_;
  if (!key.empty() || bucket_path_.empty()) url += "/" + UrlEncode(key, /*keep_slash=*/true);
  if (!query.empty()) url += "?" + std::string(query);
  return url;
}

S3Storage::Call S3Storage::Begin(const CallOptions& opts) const {
  return CallDeadline::From(opts, opts_.default_timeout);
}

Result<HttpResponse> S3Storage::Send(const Call& call, HttpRequest req, std::string_view what) {
  auto credentials = credentials_.Get();
  if (!credentials.ok()) return credentials.take_error();
  AwsSigV4 sign;
  sign.region = opts_.region;
  sign.access_key_id = credentials->access_key_id;
  sign.secret_access_key = credentials->secret_access_key;
  sign.session_token = credentials->session_token;
  req.sign = &sign;
  return PerformWithin(http_, call, std::move(req), opts_.connect_timeout, opts_.stall_timeout,
                       what);
}

Result<HttpResponse> S3Storage::SendOk(const Call& call, HttpRequest req, std::string_view what) {
  auto resp = Send(call, std::move(req), what);
  if (resp.ok() && !Is2xx(resp->status)) return MapS3Error(resp->status, resp->body, what);
  return resp;
}

Result<ObjectInfo> S3Storage::Head(const Call& call, const std::string& key, std::string name) {
  HttpRequest req;
  req.method = HttpRequest::Method::kHead;
  req.url = Url(key, "");
  STRATA_ASSIGN_OR_RETURN(HttpResponse resp, Send(call, std::move(req), "HEAD " + key));
  ObjectInfo info;
  info.name = std::move(name);
  if (resp.status == 404) return info;
  if (!Is2xx(resp.status)) return MapS3Error(resp.status, resp.body, "HEAD " + key);
  info.exists = true;
  uint64_t size = 0;
  const std::string_view length = resp.Header("content-length");
  std::from_chars(length.data(), length.data() + length.size(), size);
  info.size = size;
  info.mtime_ms = HttpDateMs(resp.Header("last-modified"));
  return info;
}

Result<bool> S3Storage::HasChildren(const Call& call, const std::string& key) {
  HttpRequest req;
  req.url = Url("", fmt::format("list-type=2&max-keys=1&prefix={}", UrlEncode(key + "/", false)));
  STRATA_ASSIGN_OR_RETURN(HttpResponse resp, SendOk(call, std::move(req), "LIST " + key));
  STRATA_ASSIGN_OR_RETURN(s3::ListPage page, s3::ParseListPage(s3::AsText(resp.body)));
  return !page.objects.empty() || !page.common_prefixes.empty();
}

Result<ObjectInfo> S3Storage::Stat(std::string_view path, const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path, /*allow_root=*/true));
  if (path.empty()) return ObjectInfo{"", true, true, 0, 0};
  Call call = Begin(opts);
  const std::string key = Key(path);
  STRATA_ASSIGN_OR_RETURN(ObjectInfo info, Head(call, key, std::string(path)));
  if (info.exists) return info;
  STRATA_ASSIGN_OR_RETURN(bool dir, HasChildren(call, key));
  info.exists = dir;
  info.is_dir = dir;
  return info;
}

Result<Bytes> S3Storage::Get(std::string_view path, uint64_t offset, uint64_t length,
                             const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path));
  Call call = Begin(opts);
  const std::string key = Key(path);
  HttpRequest req;
  req.url = Url(key, "");
  if (length == 0) {
    STRATA_ASSIGN_OR_RETURN(ObjectInfo info, Head(call, key, key));
    if (!info.exists) return MakeError(Errc::kNotFound, "GET " + key + ": no such object");
    if (offset > info.size) return MakeError(Errc::kOutOfRange, "GET " + key + ": past the end");
    return Bytes{};
  }
  if (length != kToEnd) {
    req.headers.push_back(fmt::format("Range: bytes={}-{}", offset, offset + length - 1));
  } else if (offset > 0) {
    req.headers.push_back(fmt::format("Range: bytes={}-", offset));
  }
  req.size_hint = size_t(std::min<uint64_t>(length, 64u << 20));
  if (opts.on_source) opts.on_source(base_url_);
  const std::string what = "GET " + key;
  STRATA_ASSIGN_OR_RETURN(HttpResponse resp, Send(call, std::move(req), what));
  if (resp.status == 416) {
    // Asked from the end (or past it): an empty read at exactly the end.
    STRATA_ASSIGN_OR_RETURN(ObjectInfo info, Head(call, key, key));
    if (!info.exists) return MakeError(Errc::kNotFound, what + ": no such object");
    if (offset == info.size) return Bytes{};
    return MakeError(Errc::kOutOfRange,
                     fmt::format("{}: offset {} past the end ({} bytes)", what, offset, info.size));
  }
  if (!Is2xx(resp.status)) return MapS3Error(resp.status, resp.body, what);
  Bytes data = std::move(resp.body);
  if (resp.status == 200 && offset > 0) {  // a store that ignored the range
    if (offset > data.size()) return MakeError(Errc::kOutOfRange, what + ": past the end");
    data.erase(data.begin(), data.begin() + ptrdiff_t(offset));
  }
  if (length != kToEnd && data.size() > length) data.resize(size_t(length));
  return data;
}

Result<std::vector<ObjectInfo>> S3Storage::List(std::string_view dir, const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(dir, /*allow_root=*/true));
  Call call = Begin(opts);
  const std::string base = Key(dir);
  const std::string prefix = base.empty() ? base : base + "/";
  std::vector<ObjectInfo> out;
  const Status listed = ForEachListPage(call, prefix, /*delimited=*/true, [&](s3::ListPage& page) {
    for (const s3::ListedObject& o : page.objects) {
      if (o.key.size() <= prefix.size()) continue;  // a "directory marker" object
      out.push_back(
          ObjectInfo{o.key.substr(prefix.size()), true, false, o.size, o.last_modified_ms});
    }
    for (const std::string& p : page.common_prefixes) {
      if (p.size() <= prefix.size() + 1) continue;
      out.push_back(
          ObjectInfo{p.substr(prefix.size(), p.size() - prefix.size() - 1), true, true, 0, 0});
    }
  });
  if (!listed.ok()) return listed.error();
  std::sort(out.begin(), out.end(),
            [](const ObjectInfo& a, const ObjectInfo& b) { return a.name < b.name; });
  return out;
}

Status S3Storage::ForEachListPage(const Call& call, const std::string& prefix, bool delimited,
                                  const std::function<void(s3::ListPage&)>& visit) {
  std::string token;
  do {
    // Canonical order (SigV4 signs the query as sent): the names sorted.
    std::string query;
    if (!token.empty()) query = "continuation-token=" + UrlEncode(token, false) + "&";
    if (delimited) query += "delimiter=%2F&";
    query += "list-type=2&prefix=" + UrlEncode(prefix, false);
    HttpRequest req;
    req.url = Url("", query);
    STRATA_ASSIGN_OR_RETURN(HttpResponse resp, SendOk(call, std::move(req), "LIST " + prefix));
    STRATA_ASSIGN_OR_RETURN(s3::ListPage page, s3::ParseListPage(s3::AsText(resp.body)));
    visit(page);
    token = page.truncated ? page.next_continuation_token : std::string();
  } while (!token.empty());
  return Status::Ok();
}

Result<std::vector<std::string>> S3Storage::KeysUnder(const Call& call,
                                                      const std::string& key_prefix) {
  std::vector<std::string> keys;
  const Status listed =
      ForEachListPage(call, key_prefix, /*delimited=*/false, [&](s3::ListPage& page) {
        for (s3::ListedObject& o : page.objects) keys.push_back(std::move(o.key));
      });
  if (!listed.ok()) return listed.error();
  return keys;
}

Status S3Storage::DeleteKeys(const Call& call, const std::vector<std::string>& keys) {
  for (size_t i = 0; i < keys.size(); i += kDeleteBatch) {
    const std::vector<std::string> batch(
        keys.begin() + ptrdiff_t(i),
        keys.begin() + ptrdiff_t(std::min(keys.size(), i + kDeleteBatch)));
    const std::string body = s3::DeleteObjectsBody(batch);
    HttpRequest req;
    req.method = HttpRequest::Method::kPost;
    req.url = Url("", "delete=");
    req.body = AsBytes(body);
    req.headers = {"Content-Type: application/xml", "Content-MD5: " + ContentMd5(body)};
    const std::string what = fmt::format("DELETE {} objects from {}", batch.size(), batch.front());
    STRATA_ASSIGN_OR_RETURN(HttpResponse resp, SendOk(call, std::move(req), what));
    STRATA_ASSIGN_OR_RETURN(auto failures, s3::ParseDeleteResult(s3::AsText(resp.body)));
    for (const s3::DeleteFailure& f : failures) {
      if (f.code == "NoSuchKey") continue;
      return MakeError(f.code == "AccessDenied" ? Errc::kInvalidArgument : Errc::kUnavailable,
                       fmt::format("{}: {} not deleted: {} {}", what, f.key, f.code, f.message));
    }
  }
  return Status::Ok();
}

Status S3Storage::Delete(std::string_view path, bool recursive, const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path, /*allow_root=*/recursive));
  Call call = Begin(opts);
  const std::string key = Key(path);
  if (!path.empty()) {
    HttpRequest req;
    req.method = HttpRequest::Method::kDelete;
    req.url = Url(key, "");
    STRATA_ASSIGN_OR_RETURN(HttpResponse resp, Send(call, std::move(req), "DELETE " + key));
    if (!Is2xx(resp.status) && resp.status != 404) {
      return MapS3Error(resp.status, resp.body, "DELETE " + key);
    }
  }
  if (!recursive) return Status::Ok();
  STRATA_ASSIGN_OR_RETURN(auto keys, KeysUnder(call, key.empty() ? key : key + "/"));
  return DeleteKeys(call, keys);
}

Status S3Storage::MkDirs(std::string_view path, const CallOptions&) {
  return ValidatePath(path, /*allow_root=*/true);  // a prefix exists with its first object
}

Status S3Storage::Rename(std::string_view src, std::string_view dst, const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(src));
  STRATA_RETURN_IF_ERROR(ValidatePath(dst));
  Call call = Begin(opts);
  const std::string from = Key(src);
  const std::string to = Key(dst);
  STRATA_ASSIGN_OR_RETURN(ObjectInfo target, Head(call, to, to));
  if (target.exists) return MakeError(Errc::kAlreadyExists, "RENAME to " + to + ": it exists");
  STRATA_ASSIGN_OR_RETURN(ObjectInfo source, Head(call, from, from));
  if (!source.exists) return MakeError(Errc::kNotFound, "RENAME " + from + ": no such object");
  HttpRequest copy;
  copy.method = HttpRequest::Method::kPut;
  copy.url = Url(to, "");
  copy.headers.push_back("x-amz-copy-source: /" + opts_.bucket + "/" + UrlEncode(from, true));
  const std::string what = "COPY " + from + " to " + to;
  STRATA_ASSIGN_OR_RETURN(HttpResponse resp, SendOk(call, std::move(copy), what));
  const s3::ErrorDocument late = s3::ParseError(s3::AsText(resp.body));  // a 200 may carry an error
  if (!late.code.empty()) {
    return MakeError(Errc::kUnavailable, fmt::format("{}: {} {}", what, late.code, late.message));
  }
  return Delete(src, /*recursive=*/false, opts);
}

}  // namespace strata::tiered
