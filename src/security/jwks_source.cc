#include "security/jwks_source.h"

#include <algorithm>
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
  } else {
    return MakeError(Errc::kInvalidArgument,
                     "JWKS URL \"" + options.url + "\" is not a file, http or https URL");
  }
  // The constructor is private so that every source has loaded once.
  std::unique_ptr<JwksSource> source(new JwksSource(std::move(options)));
  source->file_ = std::move(file);
  std::lock_guard lock(source->refresh_mu_);
  STRATA_RETURN_IF_ERROR(source->RefreshLocked(source->options_.now_ms()));
  return source;
}

std::shared_ptr<const Jwks> JwksSource::Current() {
  int64_t now = options_.now_ms();
  if (now >= next_check_ms_.load()) {
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

std::optional<Error> JwksSource::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

Status JwksSource::RefreshLocked(int64_t now_ms) {
  Status st = Load();
  next_check_ms_ = now_ms + (st.ok() ? options_.refresh_ms
                                     : std::min(options_.refresh_ms, options_.retry_backoff_ms));
  std::lock_guard lock(mu_);
  if (!st.ok() && keys_ != nullptr) {
    jwks_source_impl::Log()->warn(
        "JWKS refresh from {} failed, keeping the {} keys loaded before: {}", options_.url,
        keys_->keys().size(), st.error().message);
  }
  last_error_ = st.ok() ? std::nullopt : std::optional<Error>(st.error());
  return st;
}

Status JwksSource::Load() {
  if (!file_.empty()) return LoadFile();
  auto body = options_.fetch(options_.url);
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
