#pragma once
// Parsing of remote-store URIs ("file:///var/strata/remote", "webhdfs://nn:9870/strata",
// "s3://bucket/prefix").
#include <string>
#include <string_view>

#include "base/result.h"

namespace strata::tiered {

struct RemoteUri {
  std::string scheme;  // "file", "webhdfs" or "s3", lower case
  std::string host;    // empty for file; the bucket for s3
  int port = 0;        // 0 for file and s3
  std::string root;    // absolute, without a trailing '/' (the filesystem root is "/")
};

// kInvalidArgument on anything else: unknown scheme, missing host/port, relative path, "..".
Result<RemoteUri> ParseRemoteUri(std::string_view uri);

}  // namespace strata::tiered
