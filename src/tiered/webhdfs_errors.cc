#include "tiered/webhdfs_errors.h"

#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace strata::tiered {
namespace {

// Java exception simple names WebHDFS reports, and what they mean to a caller.
constexpr std::array<std::pair<std::string_view, Errc>, 20> kByException = {{
    {"FileNotFoundException", Errc::kNotFound},
    {"FileAlreadyExistsException", Errc::kAlreadyExists},
    {"AlreadyBeingCreatedException", Errc::kAlreadyExists},
    {"SafeModeException", Errc::kUnavailable},
    {"RetriableException", Errc::kUnavailable},
    {"StandbyException", Errc::kUnavailable},
    {"ConnectException", Errc::kUnavailable},
    {"ObserverRetryOnActiveException", Errc::kUnavailable},
    {"AccessControlException", Errc::kInvalidArgument},
    {"SecurityException", Errc::kInvalidArgument},
    {"AuthorizationException", Errc::kInvalidArgument},
    {"IllegalArgumentException", Errc::kInvalidArgument},
    {"InvalidPathException", Errc::kInvalidArgument},
    {"ParentNotDirectoryException", Errc::kInvalidArgument},
    {"PathIsNotEmptyDirectoryException", Errc::kInvalidArgument},
    {"UnsupportedOperationException", Errc::kUnsupported},
    {"EOFException", Errc::kOutOfRange},
    {"DSQuotaExceededException", Errc::kTooLarge},
    {"NSQuotaExceededException", Errc::kTooLarge},
    {"QuotaExceededException", Errc::kTooLarge},
}};

Errc ByStatus(long status) {
  if (status == 404) return Errc::kNotFound;
  if (status == 408) return Errc::kTimeout;
  if (status == 429 || status >= 500) return Errc::kUnavailable;
  if (status == 403) return Errc::kIoError;  // IOException family
  if (status >= 400) return Errc::kInvalidArgument;
  return Errc::kIoError;  // an unexpected 1xx/2xx/3xx
}

}  // namespace

Error MapWebHdfsError(long http_status, ByteView body, std::string_view context) {
  std::string exception;
  std::string message;
  auto json = nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_object() && json.contains("RemoteException") && json["RemoteException"].is_object()) {
    const auto& re = json["RemoteException"];
    if (re.contains("exception") && re["exception"].is_string()) exception = re["exception"];
    if (re.contains("message") && re["message"].is_string()) message = re["message"];
    message = message.substr(0, message.find('\n'));  // some replies append a Java stack trace
  }
  Errc code = ByStatus(http_status);
  if (!exception.empty()) {
    for (const auto& [name, errc] : kByException) {
      if (exception == name) code = errc;
    }
    return MakeError(code,
                     fmt::format("{}: HTTP {} {}: {}", context, http_status, exception, message));
  }
  std::string_view text(reinterpret_cast<const char*>(body.data()),
                        std::min<size_t>(body.size(), 200));
  return MakeError(
      code, fmt::format("{}: HTTP {}{}{}", context, http_status, text.empty() ? "" : ": ", text));
}

}  // namespace strata::tiered
