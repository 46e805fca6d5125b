#include "security/jwks_source.h"

#include <algorithm>
#include <chrono>
#include <string_view>

#include "base/clock.h"
#include "base/env.h"
#include "base/log.h"

namespace strata::security {

// Named so that a unity build of the module never merges these with
// another file's helpers.
namespace jwks_source_impl {
namespace {

auto Log() { return log::Get("security"); }

// Whether `url` starts with "<scheme>://", the scheme in any case.
bool HasScheme(std::string_view url, std::string_view scheme) {
  if (url.size() < scheme.size() + 3 || url.substr(scheme.size(), 3) != "://") return false;
  return std::equal(scheme.begin(), scheme.end(), url.begin(), [](char a, char b) {
    return a == (b >= 'A' && b <= 'Z' ? char(b - 'A' + 'a') : b);
  });
}

// Kafka's MISSING_KEY_ID_MAX_KEY_LENGTH: a longer kid is taken for a
// malformed token, not a rotated key.
constexpr size_t kMaxKidChars = 1000;

// The refresh thread's shortest sleep, whatever the settings: never a busy
// loop against the provider.
constexpr int64_t kMinRefreshWaitMs = 10;

}  // namespace
}  // namespace jwks_source_impl

Result<std::unique_ptr<JwksSource>> JwksSource::Open(JwksSourceOptions options) {
  if (options.refresh_ms < 0 || options.retry_backoff_ms < 0) {
    return MakeError(Errc::kInvalidArgument,
                     "sasl.oauthbearer.jwks.endpoint.refresh.ms and the retry backoff must be "
                     "non-negative");
  }
  if (!options.now_ms) options.now_ms = [] { return Clock::Real()->MonotonicMs(); };
  std::filesystem::path file;
  if (jwks_source_impl::HasScheme(options.url, "file")) {
    file = options.url.substr(7);
    if (!file.is_absolute()) {
      return MakeError(Errc::kInvalidArgument,
                       "JWKS URL " + options.url + " must name an absolute path (file:///path)");
    }
  } else if (jwks_source_impl::HasScheme(options.url, "http") ||
             jwks_source_impl::HasScheme(options.url, "https")) {
    if (!options.fetch) {
      return MakeError(Errc::kInvalidArgument,
                       "JWKS URL " + options.url + " needs an HTTP fetch function");
    }
    // As Kafka's RefreshingHttpsJwks: a refresh thread needs a period.
    if (options.refresh_ms == 0) {
      return MakeError(Errc::kInvalidArgument,
                       "sasl.oauthbearer.jwks.endpoint.refresh.ms must be positive for JWKS URL " +
                           options.url);
    }
  } else {
    return MakeError(Errc::kInvalidArgument,
                     "JWKS URL \"" + options.url + "\" is not a file, http or https URL");
  }
  // The constructor is private so that every source has loaded once.
  std::unique_ptr<JwksSource> source(new JwksSource(std::move(options)));
  source->file_ = std::move(file);
  {
    std::lock_guard lock(source->refresh_mu_);
    STRATA_RETURN_IF_ERROR(source->RefreshLocked(source->options_.now_ms()));
  }
  if (source->file_.empty()) {
    JwksSource* s = source.get();
    s->refresher_ = std::jthread([s](std::stop_token stop) { s->RefreshLoop(std::move(stop)); });
    jwks_source_impl::Log()->info("refreshing the JWKS from {} every {} ms", s->options_.url,
                                  s->options_.refresh_ms);
  }
  return source;
}

JwksSource::~JwksSource() {
  // The stop request wakes RefreshLoop's wait and interrupts its fetch.
  refresher_.request_stop();
  if (refresher_.joinable()) refresher_.join();
}

std::shared_ptr<const Jwks> JwksSource::Current() {
  int64_t now = options_.now_ms();
  // An http(s) source is refreshed by refresher_ alone: this runs on a
  // network thread, which must not wait for an HTTP timeout.
  if (!file_.empty() && now >= next_check_ms_.load()) {
    std::unique_lock lock(refresh_mu_, std::try_to_lock);
    if (lock.owns_lock() && now >= next_check_ms_.load()) {
      // A failure is logged and kept in last_error_; the old keys stay.
      (void)RefreshLocked(now);
    }
  }
  std::lock_guard lock(mu_);
  return keys_;
}

Status JwksSource::Refresh() {
  std::lock_guard lock(refresh_mu_);
  return RefreshLocked(options_.now_ms());
}

void JwksSource::RequestRefresh(std::string_view kid) {
  if (kid.size() > jwks_source_impl::kMaxKidChars) return;
  const int64_t now = options_.now_ms();
  int64_t next = next_request_ms_.load();
  // Rate-limited; a thread that loses the exchange has just been beaten to it.
  if (now < next ||
      !next_request_ms_.compare_exchange_strong(next, now + options_.retry_backoff_ms)) {
    return;
  }
  // {:?} quotes and escapes: the kid comes from an unauthenticated client.
  jwks_source_impl::Log()->info(
      "a token names kid {:?}, which the JWKS from {} lacks: checking it now", kid, options_.url);
  if (!file_.empty()) {
    std::unique_lock lock(refresh_mu_, std::try_to_lock);
    // A failure is logged and kept in last_error_; the old keys stay.
    if (lock.owns_lock()) (void)RefreshLocked(now);
    return;
  }
  {
    std::lock_guard lock(wake_mu_);
    refresh_requested_ = true;
  }
  wake_.notify_one();
}

void JwksSource::RefreshLoop(std::stop_token stop) {
  int64_t wait_ms = options_.refresh_ms;  // Open has just loaded the keys
  while (true) {
    {
      std::unique_lock lock(wake_mu_);
      wake_.wait_for(lock, stop,
                     std::chrono::milliseconds(
                         std::max(wait_ms, jwks_source_impl::kMinRefreshWaitMs)),
                     [this] { return refresh_requested_; });
      if (stop.stop_requested()) return;
      refresh_requested_ = false;
    }
    std::lock_guard lock(refresh_mu_);
    // A failure is logged and kept in last_error_; the old keys stay.
    wait_ms = WaitAfter(RefreshLocked(options_.now_ms(), stop));
  }
}

std::optional<Error> JwksSource::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

int64_t JwksSource::WaitAfter(const Status& refresh) const {
  return refresh.ok() ? options_.refresh_ms
                      : std::min(options_.refresh_ms, options_.retry_backoff_ms);
}

Status JwksSource::RefreshLocked(int64_t now_ms, std::stop_token stop) {
  Status st = file_.empty() ? LoadUrl(std::move(stop)) : LoadFile();
  next_check_ms_ = now_ms + WaitAfter(st);
  std::lock_guard lock(mu_);
  if (!st.ok() && keys_ != nullptr) {
    jwks_source_impl::Log()->warn(
        "JWKS refresh from {} failed, keeping the {} keys loaded before: {}", options_.url,
        keys_->keys().size(), st.error().message);
  }
  last_error_ = st.ok() ? std::nullopt : std::optional<Error>(st.error());
  return st;
}

Status JwksSource::LoadUrl(std::stop_token stop) {
  auto body = options_.fetch(options_.url, std::move(stop));
  if (!body.ok()) {
    return MakeError(body.error().code,
                     "fetching the JWKS from " + options_.url + ": " + body.error().message);
  }
  auto jwks = Jwks::Parse(*body);
  if (!jwks.ok()) {
    return MakeError(Errc::kInvalidArgument,
                     "the JWKS from " + options_.url + ": " + jwks.error().message);
  }
  jwks_source_impl::Log()->debug("fetched {} JWKS keys from {}", jwks->keys().size(), options_.url);
  std::lock_guard lock(mu_);
  keys_ = std::make_shared<const Jwks>(std::move(jwks).value());
  return Status::Ok();
}

Status JwksSource::LoadFile() {
  std::error_code ec;
  FileStamp stamp{std::filesystem::last_write_time(file_, ec)};
  if (!ec) stamp.size = std::filesystem::file_size(file_, ec);
  if (ec) return MakeError(Errc::kIoError, "JWKS file " + file_.string() + ": " + ec.message());
  if (file_stamp_ == stamp) return Status::Ok();
  auto bytes = Env::Default()->ReadFile(file_);
  if (!bytes.ok()) {
    return MakeError(bytes.error().code,
                     "JWKS file " + file_.string() + ": " + bytes.error().message);
  }
  auto jwks =
      Jwks::Parse(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
  if (!jwks.ok()) {
    return MakeError(Errc::kInvalidArgument,
                     "JWKS file " + file_.string() + ": " + jwks.error().message);
  }
  jwks_source_impl::Log()->info("loaded {} JWKS keys from {}", jwks->keys().size(), file_.string());
  // Recorded only on success: a file caught mid-write is read again next time.
  file_stamp_ = stamp;
  std::lock_guard lock(mu_);
  keys_ = std::make_shared<const Jwks>(std::move(jwks).value());
  return Status::Ok();
}

}  // namespace strata::security
