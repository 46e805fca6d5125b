#include "tiered/webhdfs_storage.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "tiered/posix_file.h"
#include "tiered/webhdfs_errors.h"

namespace strata::tiered {

using json = nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kCleanupTimeout{2000};

// HDFS's refusal of a read at or past a file's end ("Offset=5 out of the
// range [0, 5)").
bool IsOutOfRange(const Error& e) { return e.message.find("out of the range") != std::string::npos; }

std::string ProcessUser() {
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(::geteuid(), &pw, buf, sizeof(buf), &found) == 0 && found) return pw.pw_name;
  return "strata";
}

// "http://10.0.0.7:9864/webhdfs/v1/..." -> "10.0.0.7" (the DataNode, for excludedatanodes).
std::string HostOf(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  if (start < url.size() && url[start] == '[') {
    size_t end = url.find(']', start);
    return end == std::string::npos ? "" : url.substr(start + 1, end - start - 1);
  }
  size_t end = url.find_first_of(":/", start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

Result<json> ParseJson(const HttpResponse& resp, std::string_view what) {
  auto j = json::parse(resp.body.begin(), resp.body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return MakeError(Errc::kIoError, fmt::format("{}: reply is not JSON", what));
  }
  return j;
}

// One FileStatus object -> ObjectInfo (name from pathSuffix unless given).
ObjectInfo ToObjectInfo(const json& fs, std::string name) {
  ObjectInfo info;
  info.name = name.empty() ? fs.value("pathSuffix", std::string()) : std::move(name);
  info.exists = true;
  info.is_dir = fs.value("type", std::string()) == "DIRECTORY";
  info.size = info.is_dir ? 0 : fs.value("length", uint64_t{0});
  info.mtime_ms = fs.value("modificationTime", int64_t{0});
  return info;
}

Result<bool> BooleanReply(const HttpResponse& resp, std::string_view what) {
  STRATA_ASSIGN_OR_RETURN(json j, ParseJson(resp, what));
  if (!j.contains("boolean") || !j["boolean"].is_boolean()) {
    return MakeError(Errc::kIoError, fmt::format("{}: reply has no boolean", what));
  }
  return j["boolean"].get<bool>();
}

}  // namespace

WebHdfsStorage::WebHdfsStorage(WebHdfsOptions options)
    : opts_(std::move(options)), http_(opts_.max_idle_connections) {
  if (opts_.user.empty()) opts_.user = ProcessUser();
  while (opts_.root.size() > 1 && opts_.root.back() == '/') opts_.root.pop_back();
  if (opts_.root.empty()) opts_.root = "/";
  std::string host =
      opts_.host.find(':') != std::string::npos ? "[" + opts_.host + "]" : opts_.host;
  base_url_ = fmt::format("http://{}:{}/webhdfs/v1", host, opts_.port);
}

std::string WebHdfsStorage::AbsPath(std::string_view rel) const {
  if (rel.empty()) return opts_.root;
  return opts_.root == "/" ? fmt::format("/{}", rel) : fmt::format("{}/{}", opts_.root, rel);
}

std::string WebHdfsStorage::Url(const std::string& abs_path, std::string_view op,
                                std::string_view extra) const {
  return fmt::format("{}{}?op={}&user.name={}{}", base_url_, UrlEncode(abs_path, true), op,
                     UrlEncode(opts_.user, false), extra);
}

WebHdfsStorage::Call WebHdfsStorage::Begin(const CallOptions& opts) const {
  return CallDeadline::From(opts, opts_.default_timeout);
}

Result<HttpResponse> WebHdfsStorage::Send(const Call& call, HttpRequest req, long expect,
                                          std::string_view what) {
  auto resp =
      PerformWithin(http_, call, std::move(req), opts_.connect_timeout, opts_.stall_timeout, what);
  if (!resp.ok()) return resp;
  if (resp->status != expect) return MapWebHdfsError(resp->status, resp->body, what);
  return resp;
}

Result<HttpResponse> WebHdfsStorage::SendRedirected(
    const Call& call, HttpRequest req, long expect, std::string_view what,
    const std::function<void(const std::string&)>& on_datanode, std::string* datanode_url) {
  HttpRequest to_namenode = req;
  to_namenode.body = {};
  to_namenode.body_fd = -1;
  to_namenode.body_size = 0;
  STRATA_ASSIGN_OR_RETURN(HttpResponse redirect, Send(call, std::move(to_namenode), 307, what));
  if (redirect.location.rfind("http", 0) != 0) {
    return MakeError(Errc::kIoError, fmt::format("{}: 307 without a usable Location", what));
  }
  if (on_datanode) on_datanode(HostOf(redirect.location));
  if (datanode_url != nullptr) *datanode_url = redirect.location;
  req.url = std::move(redirect.location);
  return Send(call, std::move(req), expect, what);
}

Status WebHdfsStorage::Upload(const Call& call, const std::string& abs, const PutSource& src,
                              int fd, uint64_t size) {
  std::string extra = "&overwrite=true";
  if (opts_.replication > 0) extra += fmt::format("&replication={}", opts_.replication);
  if (opts_.block_size > 0) extra += fmt::format("&blocksize={}", opts_.block_size);
  HttpRequest req;
  req.method = HttpRequest::Method::kPut;
  req.url = Url(abs, "CREATE", extra);
  if (fd >= 0) {
    req.body_fd = fd;
    req.body_size = size;
  } else {
    req.body = src.bytes;
  }
  auto resp = SendRedirected(call, std::move(req), 201, fmt::format("CREATE {}", abs), {});
  if (!resp.ok()) return resp.take_error();
  return Status::Ok();
}

Status WebHdfsStorage::Put(std::string_view path, const PutSource& src, const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path));
  Call call = Begin(opts);
  STRATA_ASSIGN_OR_RETURN(OpenedPutSource source, OpenPutSource(src));
  const uint64_t size = source.size;
  std::string target = AbsPath(path);
  std::string tmp = TemporaryNameFor(target);
  Status st = Upload(call, tmp, src, source.fd.get(), size);
  if (st.ok()) {
    auto info = StatAbs(call, tmp, tmp);
    if (!info.ok()) {
      st = info.take_error();
    } else if (!info->exists || info->size != size) {
      st = MakeError(Errc::kIoError,
                     fmt::format("CREATE {}: stored {} bytes, sent {}", tmp, info->size, size));
    }
  }
  if (st.ok()) st = RenameAbs(call, tmp, target, /*overwrite=*/true);
  if (!st.ok()) {
    // Best effort; a leftover temporary is invisible to List and harmless.
    const Call cleanup = CallDeadline::In(kCleanupTimeout);
    (void)DeleteAbs(cleanup, tmp, false);
  }
  return st;
}

std::optional<Result<HttpResponse>> WebHdfsStorage::OpenAtRememberedDataNode(
    const Call& call, const std::string& abs, uint64_t offset, uint64_t length,
    const CallOptions& opts, bool avoid, std::string_view what) {
  std::optional<std::string> url = redirects_.Find(abs);
  if (!url) return std::nullopt;
  const std::string host = HostOf(*url);
  if (avoid &&
      std::find(opts.avoid_nodes.begin(), opts.avoid_nodes.end(), host) != opts.avoid_nodes.end()) {
    return std::nullopt;  // a hedge away from that DataNode
  }
  HttpRequest req;
  req.url = WebHdfsRedirects::WithRange(*url, offset, length);
  req.size_hint = size_t(std::min<uint64_t>(length, 64u << 20));
  if (opts.on_source) opts.on_source(host);
  auto resp = Send(call, std::move(req), 200, what);
  if (resp.ok()) {
    redirects_.CountReuse();
  } else if (!IsOutOfRange(resp.error())) {
    // Moved, gone or refusing: ask the NameNode again. (A read at the end of
    // the file is refused as out of range by any DataNode: that one stays.)
    redirects_.Forget(abs, *url);
  }
  return resp;
}

Result<Bytes> WebHdfsStorage::Open(const Call& call, const std::string& abs, uint64_t offset,
                                   uint64_t length, const CallOptions& opts, bool avoid) {
  const std::string what = fmt::format("OPEN {} @{}", abs, offset);
  std::optional<Result<HttpResponse>> data =
      OpenAtRememberedDataNode(call, abs, offset, length, opts, avoid, what);
  // (Out of range at the DataNode is the answer: the NameNode would say the same.)
  if (!data || (!data->ok() && !IsOutOfRange(data->error()))) {
    std::string extra = fmt::format("&offset={}", offset);
    if (length != kToEnd) extra += fmt::format("&length={}", length);
    if (avoid && !opts.avoid_nodes.empty()) {
      std::string hosts;
      for (const auto& n : opts.avoid_nodes) hosts += (hosts.empty() ? "" : ",") + n;
      extra += "&excludedatanodes=" + UrlEncode(hosts, false);
    }
    HttpRequest req;
    req.url = Url(abs, "OPEN", extra);
    req.size_hint = size_t(std::min<uint64_t>(length, 64u << 20));
    std::string datanode;
    data = SendRedirected(call, std::move(req), 200, what, opts.on_source, &datanode);
    if (data->ok()) redirects_.Remember(abs, datanode);
  }
  if (!data->ok()) return data->take_error();
  Bytes body = std::move((*data)->body);
  if (length != kToEnd && body.size() > length) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("{}: got {} bytes, asked for {}", what, body.size(), length));
  }
  return body;
}

Result<Bytes> WebHdfsStorage::Get(std::string_view path, uint64_t offset, uint64_t length,
                                  const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path));
  Call call = Begin(opts);
  std::string abs = AbsPath(path);
  auto data = Open(call, abs, offset, length, opts, /*avoid=*/true);
  if (!data.ok() && !opts.avoid_nodes.empty() &&
      data.error().message.find("not excluded nodes") != std::string::npos) {
    // Every replica is on an avoided node; the hint cannot be honoured, so read from any.
    data = Open(call, abs, offset, length, opts, /*avoid=*/false);
  }
  if (!data.ok() && IsOutOfRange(data.error())) {
    // HDFS refuses offset == length ("Offset=5 out of the range [0, 5)"); our contract reads
    // nothing there and reports kOutOfRange only past the end.
    STRATA_ASSIGN_OR_RETURN(ObjectInfo info, StatAbs(call, abs, ""));
    if (info.exists && !info.is_dir && offset == info.size) return Bytes{};
    if (info.exists && !info.is_dir && offset > info.size) {
      return MakeError(Errc::kOutOfRange,
                       fmt::format("OPEN {}: offset {} > size {}", abs, offset, info.size));
    }
  }
  return data;
}

Result<ObjectInfo> WebHdfsStorage::StatAbs(const Call& call, const std::string& abs,
                                           std::string name) {
  HttpRequest req;
  req.url = Url(abs, "GETFILESTATUS", "");
  auto resp = Send(call, std::move(req), 200, fmt::format("GETFILESTATUS {}", abs));
  if (!resp.ok()) {
    if (resp.error().code == Errc::kNotFound) return ObjectInfo{std::move(name)};
    return resp.take_error();
  }
  STRATA_ASSIGN_OR_RETURN(json j, ParseJson(*resp, "GETFILESTATUS"));
  if (!j.contains("FileStatus") || !j["FileStatus"].is_object()) {
    return MakeError(Errc::kIoError, fmt::format("GETFILESTATUS {}: no FileStatus", abs));
  }
  return ToObjectInfo(j["FileStatus"], std::move(name));
}

Result<ObjectInfo> WebHdfsStorage::Stat(std::string_view path, const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path, /*allow_root=*/true));
  auto info = StatAbs(Begin(opts), AbsPath(path), std::string(path));
  if (info.ok() && path.empty()) info->name.clear();
  return info;
}

Result<std::vector<ObjectInfo>> WebHdfsStorage::List(std::string_view dir,
                                                     const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(dir, /*allow_root=*/true));
  Call call = Begin(opts);
  std::string abs = AbsPath(dir);
  std::string what = fmt::format("LISTSTATUS_BATCH {}", abs);
  std::vector<ObjectInfo> out;
  std::string start_after;
  for (;;) {
    HttpRequest req;
    req.url = Url(abs, "LISTSTATUS_BATCH",
                  start_after.empty() ? "" : "&startAfter=" + UrlEncode(start_after, false));
    auto resp = Send(call, std::move(req), 200, what);
    if (!resp.ok() && resp.error().code == Errc::kNotFound) return out;
    if (!resp.ok()) return resp.take_error();
    STRATA_ASSIGN_OR_RETURN(json j, ParseJson(*resp, what));
    const json& listing = j["DirectoryListing"];
    const json* page = nullptr;
    if (listing.is_object() && listing["partialListing"].is_object() &&
        listing["partialListing"]["FileStatuses"].is_object()) {
      page = &listing["partialListing"]["FileStatuses"]["FileStatus"];
    }
    if (!page || !page->is_array()) return MakeError(Errc::kIoError, what + ": bad reply");
    for (const json& fs : *page) {
      ObjectInfo info = ToObjectInfo(fs, "");
      if (info.name.empty()) return MakeError(Errc::kInvalidArgument, what + ": not a directory");
      start_after = info.name;
      if (!IsTemporaryName(info.name)) out.push_back(std::move(info));
    }
    if (page->empty() || listing.value("remainingEntries", int64_t{0}) <= 0) break;
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

Status WebHdfsStorage::DeleteAbs(const Call& call, const std::string& abs, bool recursive) {
  HttpRequest req;
  req.method = HttpRequest::Method::kDelete;
  req.url = Url(abs, "DELETE", recursive ? "&recursive=true" : "&recursive=false");
  std::string what = fmt::format("DELETE {}", abs);
  auto resp = Send(call, std::move(req), 200, what);
  if (!resp.ok()) {
    if (resp.error().code == Errc::kNotFound) return Status::Ok();
    return resp.take_error();
  }
  // {"boolean":false} means there was nothing to delete: the outcome the caller wants.
  auto deleted = BooleanReply(*resp, what);
  if (!deleted.ok()) return deleted.take_error();
  return Status::Ok();
}

Status WebHdfsStorage::Delete(std::string_view path, bool recursive, const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path));
  return DeleteAbs(Begin(opts), AbsPath(path), recursive);
}

Status WebHdfsStorage::MkDirs(std::string_view path, const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(path, /*allow_root=*/true));
  std::string abs = AbsPath(path);
  std::string what = fmt::format("MKDIRS {}", abs);
  HttpRequest req;
  req.method = HttpRequest::Method::kPut;
  req.url = Url(abs, "MKDIRS", "");
  STRATA_ASSIGN_OR_RETURN(HttpResponse resp, Send(Begin(opts), std::move(req), 200, what));
  STRATA_ASSIGN_OR_RETURN(bool made, BooleanReply(resp, what));
  if (!made) return MakeError(Errc::kIoError, what + ": NameNode answered false");
  return Status::Ok();
}

Status WebHdfsStorage::RenameAbs(const Call& call, const std::string& from, const std::string& to,
                                 bool overwrite) {
  // renameoptions selects rename2 semantics: a clear exception instead of a bare false, and no
  // "move into the directory named dst" surprise.
  HttpRequest req;
  req.method = HttpRequest::Method::kPut;
  req.url = Url(from, "RENAME",
                fmt::format("&destination={}&renameoptions={}", UrlEncode(to, true),
                            overwrite ? "OVERWRITE" : "NONE"));
  auto resp = Send(call, std::move(req), 200, fmt::format("RENAME {} -> {}", from, to));
  if (!resp.ok()) return resp.take_error();
  return Status::Ok();
}

Status WebHdfsStorage::Rename(std::string_view src, std::string_view dst, const CallOptions& opts) {
  STRATA_RETURN_IF_ERROR(ValidatePath(src));
  STRATA_RETURN_IF_ERROR(ValidatePath(dst));
  return RenameAbs(Begin(opts), AbsPath(src), AbsPath(dst), /*overwrite=*/false);
}

}  // namespace strata::tiered
