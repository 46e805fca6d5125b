#pragma once
// JwksSource: where the broker's OAUTHBEARER verification keys come from,
// Kafka's sasl.oauthbearer.jwks.endpoint.url. A file:// URL is read at start
// and re-read when its mtime or size changes; an http:// or https:// URL is
// fetched with the caller's fetch function (this module has no HTTP client;
// the broker passes one built on libcurl). Either is checked again at most
// every refresh_ms (sasl.oauthbearer.jwks.endpoint.refresh.ms), and after a
// failed check every retry_backoff_ms until one succeeds. A failed refresh
// (file gone, bad JSON, endpoint down) keeps the keys already held, is logged
// once per attempt and stays in last_error() until a refresh succeeds.
//
// Thread-safety: every method may be called from any thread. Current() does
// the due check on the calling thread; when several call at once, one checks
// and the others return the keys held without waiting.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/result.h"
#include "security/jwt.h"

namespace strata::security {

struct JwksSourceOptions {
  std::string url;                   // sasl.oauthbearer.jwks.endpoint.url
  int64_t refresh_ms = 3600000;      // sasl.oauthbearer.jwks.endpoint.refresh.ms
  int64_t retry_backoff_ms = 10000;  // sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms
  // Fetches an http(s) URL's body (bounded by its own timeout); required for
  // such URLs, unused for file://. Called on whichever thread refreshes.
  std::function<Result<std::string>(const std::string& url)> fetch;
  // Monotonic ms; defaults to the real clock.
  std::function<int64_t()> now_ms;
};

class JwksSource {
 public:
  // Loads the keys once: a bad URL or a failed first load is an error, so
  // that a misconfigured listener fails at start-up rather than per client.
  static Result<std::unique_ptr<JwksSource>> Open(JwksSourceOptions options);

  // The keys held, after a refresh when one is due. Never null.
  std::shared_ptr<const Jwks> Current();

  // Checks the source now, whether or not a refresh is due.
  Status Refresh();

  // Why the last refresh failed; nullopt after a successful one.
  std::optional<Error> last_error() const;

  const std::string& url() const { return options_.url; }

 private:
  // A file's identity for change detection.
  struct FileStamp {
    std::filesystem::file_time_type mtime;
    uintmax_t size = 0;
    bool operator==(const FileStamp&) const = default;
  };

  explicit JwksSource(JwksSourceOptions options) : options_(std::move(options)) {}

  Status RefreshLocked(int64_t now_ms);  // holds refresh_mu_
  Status Load();                         // holds refresh_mu_
  Status LoadFile();                     // holds refresh_mu_

  const JwksSourceOptions options_;
  std::filesystem::path file_;  // set for file:// URLs

  std::mutex refresh_mu_;  // one refresh at a time; guards file_stamp_
  std::optional<FileStamp> file_stamp_;
  std::atomic<int64_t> next_check_ms_{0};

  mutable std::mutex mu_;  // guards keys_ and last_error_
  std::shared_ptr<const Jwks> keys_;
  std::optional<Error> last_error_;
};

}  // namespace strata::security
