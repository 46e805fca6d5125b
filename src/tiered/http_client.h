#pragma once
// HttpClient: blocking HTTP/1.1 requests over libcurl for the WebHDFS and S3 backends. Redirects
// are never followed automatically (WebHDFS needs the body re-sent to the DataNode, and the caller
// wants to know which DataNode it was sent to); the Location header is returned instead. S3
// requests are signed by libcurl's own AWS Signature Version 4 (CURLOPT_AWS_SIGV4).
// Thread-safe: easy handles live in a mutex-protected pool, so connections are reused across calls
// and threads (curl_easy_reset keeps a handle's live connections).
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "tiered/remote_storage.h"

namespace strata::tiered {

// AWS Signature Version 4, computed by libcurl over the method, URL, headers and (for S3, as
// "UNSIGNED-PAYLOAD" unless the caller sets x-amz-content-sha256 itself) the payload.
struct AwsSigV4 {
  std::string region;
  std::string service = "s3";
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // sent as x-amz-security-token when set
};

struct HttpRequest {
  enum class Method { kGet, kHead, kPut, kPost, kDelete };
  Method method = Method::kGet;
  std::string url;
  // PUT/POST body: either `body` (memory) or `body_fd` (a file read with pread from
  // body_offset). -1 = no file.
  ByteView body;
  int body_fd = -1;
  uint64_t body_offset = 0;  // for body_fd
  uint64_t body_size = 0;    // for body_fd
  // Extra request headers, "Name: value" each.
  std::vector<std::string> headers;
  const AwsSigV4* sign = nullptr;  // sign the request when set (borrowed for the call)
  std::chrono::milliseconds timeout{30000};
  std::chrono::milliseconds connect_timeout{3000};
  // Abort (kTimeout) when no byte moves for this long, however much of `timeout` is left; 0 = off.
  std::chrono::milliseconds stall_timeout{0};
  CancelFlag cancel;
  size_t size_hint = 0;  // expected response body size (reserve)
};

struct HttpResponse {
  long status = 0;
  std::string location;  // Location header of a 3xx, if any
  // Response headers, names in lower case, of the final response.
  std::vector<std::pair<std::string, std::string>> headers;
  Bytes body;

  // The first header named `lower_name`, or "".
  std::string_view Header(std::string_view lower_name) const;
};

class HttpClient {
 public:
  explicit HttpClient(int max_idle_handles);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Any HTTP status is a success here; errors are transport failures: kUnavailable (connect
  // refused, reset, DNS), kTimeout, kShuttingDown (cancelled), kIoError (other).
  Result<HttpResponse> Perform(const HttpRequest& req);

 private:
  struct HandleDeleter {
    void operator()(void* h) const;
  };
  using Handle = std::unique_ptr<void, HandleDeleter>;

  Handle Acquire();
  void Release(Handle h);

  const size_t max_idle_;
  std::mutex mu_;
  std::vector<Handle> idle_;  // guarded by mu_
};

// One storage call's deadline, spanning all its HTTP round trips, and its cancel flag.
struct CallDeadline {
  std::chrono::steady_clock::time_point deadline;
  CancelFlag cancel;

  // opts.timeout from now, or `default_timeout` when the caller set none.
  static CallDeadline From(const CallOptions& opts, std::chrono::milliseconds default_timeout);
  // A deadline of its own (cleanup after a failed call), not cancellable.
  static CallDeadline In(std::chrono::milliseconds timeout);
  std::chrono::milliseconds Remaining() const;
};

// Sends `req` within `call` (the request's timeout and cancel flag come from it): any HTTP status
// is returned; a transport error or a cancelled call is an Error naming `what`.
Result<HttpResponse> PerformWithin(HttpClient& http, const CallDeadline& call, HttpRequest req,
                                   std::chrono::milliseconds connect_timeout,
                                   std::chrono::milliseconds stall_timeout, std::string_view what);

// Percent-encodes s for a URL; '/' is kept when keep_slash (paths), encoded otherwise (values).
std::string UrlEncode(std::string_view s, bool keep_slash);

}  // namespace strata::tiered
