#include "tiered/remote_uri.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace strata::tiered {
namespace {

Error Bad(std::string_view uri, std::string_view why) {
  return MakeError(Errc::kInvalidArgument, fmt::format("remote storage URI '{}': {}", uri, why));
}

// Normalises an absolute path: collapses "//", drops "." and a trailing '/'; rejects "..".
Result<std::string> NormaliseRoot(std::string_view uri, std::string_view path) {
  if (path.empty() || path[0] != '/') return Bad(uri, "path must be absolute");
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view seg = path.substr(i, j - i);
    if (seg == "..") return Bad(uri, "'..' is not allowed");
    if (!seg.empty() && seg != ".") {
      out += '/';
      out += seg;
    }
    i = j + 1;
  }
  return out.empty() ? std::string("/") : out;
}

}  // namespace

Result<RemoteUri> ParseRemoteUri(std::string_view uri) {
  size_t sep = uri.find("://");
  if (sep == std::string_view::npos) return Bad(uri, "expected scheme://");
  RemoteUri out;
  for (char c : uri.substr(0, sep)) out.scheme += char(std::tolower(static_cast<unsigned char>(c)));
  std::string_view rest = uri.substr(sep + 3);
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "/" : rest.substr(slash);
  if (rest.find_first_of("?#") != std::string_view::npos) return Bad(uri, "no query or fragment");

  if (out.scheme == "file") {
    if (!authority.empty() && authority != "localhost") return Bad(uri, "file URIs take no host");
  } else if (out.scheme == "webhdfs") {
    size_t colon = authority.rfind(':');
    if (authority.empty() || colon == std::string_view::npos || colon == 0) {
      return Bad(uri, "expected webhdfs://host:port/path");
    }
    out.host = std::string(authority.substr(0, colon));
    std::string_view port = authority.substr(colon + 1);
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
    if (ec != std::errc() || p != port.data() + port.size() || out.port <= 0 || out.port > 65535) {
      return Bad(uri, "bad port");
    }
  } else if (out.scheme == "s3") {
    // The bucket, as S3 names them: 3 to 63 of lower-case letters, digits, '.' and '-'.
    const bool valid = authority.size() >= 3 && authority.size() <= 63 &&
                       std::all_of(authority.begin(), authority.end(), [](char c) {
                         return std::islower(static_cast<unsigned char>(c)) ||
                                std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-';
                       });
    if (!valid) return Bad(uri, "expected s3://bucket/prefix with a valid bucket name");
    out.host = std::string(authority);
  } else {
    return Bad(uri, "unsupported scheme (file, webhdfs, s3)");
  }
  STRATA_ASSIGN_OR_RETURN(out.root, NormaliseRoot(uri, path));
  return out;
}

}  // namespace strata::tiered
