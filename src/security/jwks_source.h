#pragma once
// JwksSource: where the broker's OAUTHBEARER verification keys come from,
// Kafka's sasl.oauthbearer.jwks.endpoint.url. A file:// URL is read at start
// and re-read when its mtime or size changes; an http:// or https:// URL is
// fetched with the caller's fetch function (this module has no HTTP client;
// the broker passes one built on libcurl). Either is checked again every
// refresh_ms (sasl.oauthbearer.jwks.endpoint.refresh.ms), and after a failed
// check every retry_backoff_ms until one succeeds; a token naming a kid the
// keys lack asks for an early check (RequestRefresh), as Kafka's
// RefreshingHttpsJwks.maybeExpediteRefresh. A failed refresh (file gone, bad
// JSON, endpoint down) keeps the keys already held, is logged once per
// attempt and stays in last_error() until a refresh succeeds.
//
// Threads: Current() runs on the broker's network threads, so it never waits
// for the network. An http(s) source is refreshed by a thread of its own,
// which the destructor stops (interrupting an in-flight fetch through its
// stop token); a file source is checked by the Current() call that finds a
// check due, which costs a stat (when several call at once, one checks and
// the others return the keys held without waiting). Every method may be
// called from any thread.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>

#include "base/result.h"
#include "security/jwt.h"

namespace strata::security {

struct JwksSourceOptions {
  std::string url;                   // sasl.oauthbearer.jwks.endpoint.url
  int64_t refresh_ms = 3600000;      // sasl.oauthbearer.jwks.endpoint.refresh.ms
  int64_t retry_backoff_ms = 10000;  // sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms
  // Fetches an http(s) URL's body, bounded by its own timeout and giving up
  // early once `stop` is requested (the source is being destroyed); required
  // for such URLs, unused for file://. Called on the thread that opens the
  // source for the first load, then on the source's refresh thread.
  std::function<Result<std::string>(const std::string& url, std::stop_token stop)> fetch;
  // Monotonic ms, for the file checks' schedule and RequestRefresh's rate
  // limit; defaults to the real clock. The refresh thread sleeps on the real
  // clock whatever this says.
  std::function<int64_t()> now_ms;
};

class JwksSource {
 public:
  // Loads the keys once: a bad URL or a failed first load is an error, so
  // that a misconfigured listener fails at start-up rather than per client.
  static Result<std::unique_ptr<JwksSource>> Open(JwksSourceOptions options);
  // Stops the refresh thread; waits for an in-flight fetch to give up.
  ~JwksSource();

  // The keys held, after checking a file:// source when a check is due.
  // Never null; never fetches over the network.
  std::shared_ptr<const Jwks> Current();

  // Checks the source now, on the calling thread, whether or not a refresh
  // is due.
  Status Refresh();

  // A token names `kid`, which the keys held lack: the provider may have
  // rotated its keys, so check the source early (an http(s) source wakes its
  // refresh thread; a file source is checked on the calling thread, a stat).
  // At most once per retry_backoff_ms, whatever the kid, so that tokens with
  // made-up kids cannot hammer the provider; kids over 1000 characters are
  // ignored as malformed.
  void RequestRefresh(std::string_view kid);

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

  void RefreshLoop(std::stop_token stop);  // the refresh thread (http(s) only)
  // Each holds refresh_mu_; `stop` interrupts a fetch (the refresh thread's).
  Status RefreshLocked(int64_t now_ms, std::stop_token stop = {});
  Status LoadFile();
  Status LoadUrl(std::stop_token stop);
  // How long until the next check after `refresh`: refresh_ms, or the retry
  // backoff after a failure.
  int64_t WaitAfter(const Status& refresh) const;

  const JwksSourceOptions options_;
  std::filesystem::path file_;  // set for file:// URLs

  std::mutex refresh_mu_;  // one refresh at a time; guards file_stamp_
  std::optional<FileStamp> file_stamp_;
  std::atomic<int64_t> next_check_ms_{0};
  // When RequestRefresh may next act (its rate limit).
  std::atomic<int64_t> next_request_ms_{INT64_MIN};

  mutable std::mutex mu_;  // guards keys_ and last_error_
  std::shared_ptr<const Jwks> keys_;
  std::optional<Error> last_error_;

  // Wakes the refresh thread early (RequestRefresh) or to stop.
  std::mutex wake_mu_;
  std::condition_variable_any wake_;
  bool refresh_requested_ = false;  // guarded by wake_mu_
  // Runs RefreshLoop for http(s) sources; not joinable for file sources.
  // Stopped and joined by ~JwksSource, while every member is still there.
  std::jthread refresher_;
};

}  // namespace strata::security
