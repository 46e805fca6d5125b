#pragma once
// S3Options: where an S3 store is and how S3Storage uses it (see s3_storage.h). A plain value
// type, filled from strata.remote.storage.uri (bucket, prefix) and the strata.remote.s3.* keys.
#include <chrono>
#include <cstdint>
#include <string>

#include "tiered/aws_credentials.h"

namespace strata::tiered {

struct S3Options {
  std::string bucket;
  std::string prefix;  // keys start with "<prefix>/"; empty = the bucket's root
  // "http(s)://host[:port]"; empty = https://s3.<region>.amazonaws.com.
  std::string endpoint;
  std::string region = "us-east-1";
  // Path-style URLs (endpoint/bucket/key) rather than virtual-hosted (bucket.endpoint/key).
  bool path_style = false;
  AwsCredentials credentials;  // empty access key = from the environment (aws_credentials.h)
  std::chrono::milliseconds default_timeout{60000};
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds stall_timeout{20000};  // no byte moving for this long = kTimeout
  int max_idle_connections = 16;
  uint64_t multipart_threshold = 64ull << 20;  // larger Puts go multipart
  uint64_t part_size = 16ull << 20;            // S3's minimum is 5 MiB (the last part excepted)
  int upload_parallelism = 4;                  // parts of one Put in flight at once
  std::chrono::milliseconds orphan_upload_age{std::chrono::hours(1)};
};

}  // namespace strata::tiered
