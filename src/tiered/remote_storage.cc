#include "tiered/remote_storage.h"

#include <fmt/format.h>

#include <random>

#include "tiered/local_fs_storage.h"
#include "tiered/remote_uri.h"
#include "tiered/s3_storage.h"
#include "tiered/webhdfs_storage.h"

namespace strata::tiered {
namespace {

constexpr std::string_view kTmpMarker = ".strata-tmp-";

}  // namespace

bool IsRetriable(Errc code) {
  return code == Errc::kUnavailable || code == Errc::kTimeout || code == Errc::kIoError;
}

Status ValidatePath(std::string_view path, bool allow_root) {
  if (path.empty()) {
    if (allow_root) return Status::Ok();
    return MakeError(Errc::kInvalidArgument, "empty object path");
  }
  if (path.front() == '/' || path.back() == '/') {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("object path '{}' must be relative", path));
  }
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view seg = path.substr(i, j - i);
    if (seg.empty() || seg == "." || seg == "..") {
      return MakeError(Errc::kInvalidArgument, fmt::format("bad object path '{}'", path));
    }
    for (char c : seg) {
      if (static_cast<unsigned char>(c) < 0x20 || c == ':') {
        return MakeError(Errc::kInvalidArgument, fmt::format("bad character in '{}'", path));
      }
    }
    i = j + 1;
  }
  return Status::Ok();
}

std::string TemporaryNameFor(std::string_view path) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  size_t slash = path.rfind('/');
  std::string_view dir =
      slash == std::string_view::npos ? std::string_view() : path.substr(0, slash + 1);
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return fmt::format("{}.{}{}{:016x}", dir, name, kTmpMarker, rng());
}

bool IsTemporaryName(std::string_view name) {
  return !name.empty() && name.front() == '.' && name.find(kTmpMarker) != std::string_view::npos;
}

Result<std::unique_ptr<RemoteStorage>> OpenRemoteStorage(std::string_view uri,
                                                         const RemoteStorageOptions& options) {
  STRATA_ASSIGN_OR_RETURN(RemoteUri parsed, ParseRemoteUri(uri));
  if (parsed.scheme == "file") {
    std::unique_ptr<RemoteStorage> s = std::make_unique<LocalFsStorage>(parsed.root);
    return s;
  }
  if (parsed.scheme == "s3") {
    S3Options o = options.s3;
    o.bucket = parsed.host;
    o.prefix = parsed.root;
    o.default_timeout = options.default_timeout;
    o.connect_timeout = options.connect_timeout;
    o.max_idle_connections = options.max_idle_connections;
    std::unique_ptr<RemoteStorage> s = std::make_unique<S3Storage>(std::move(o));
    return s;
  }
  WebHdfsOptions w;
  w.host = parsed.host;
  w.port = parsed.port;
  w.root = parsed.root;
  w.user = options.user;
  w.default_timeout = options.default_timeout;
  w.connect_timeout = options.connect_timeout;
  w.max_idle_connections = options.max_idle_connections;
  std::unique_ptr<RemoteStorage> s = std::make_unique<WebHdfsStorage>(std::move(w));
  return s;
}

}  // namespace strata::tiered
