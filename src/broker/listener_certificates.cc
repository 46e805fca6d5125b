#include "broker/listener_certificates.h"

#include <fmt/format.h>

#include <filesystem>

#include "base/clock.h"
#include "broker/listener_sasl.h"
#include "broker/listener_tls.h"
#include "broker/logger.h"

namespace strata::broker {

namespace {

constexpr std::string_view kValidationFailed =
    "Validation of dynamic config update of SSLFactory failed: ";

// The listener (lower case) that listener.name.<listener>.ssl.* names.
std::string ListenerOfKey(const std::string& key) {
  constexpr std::string_view kPrefix = "listener.name.";
  const size_t end = key.find('.', kPrefix.size());
  return key.substr(kPrefix.size(), end - kPrefix.size());
}

}  // namespace

ListenerCertificates::FileStamps ListenerCertificates::Stamps(const net::TlsSettings& settings) {
  FileStamps stamps;
  for (const std::string* path : {&settings.keystore_location, &settings.truststore_location}) {
    if (path->empty()) continue;
    std::error_code ec;
    auto mtime = std::filesystem::last_write_time(*path, ec);
    stamps[*path] = ec ? -1 : static_cast<int64_t>(mtime.time_since_epoch().count());
  }
  return stamps;
}

Result<std::shared_ptr<asio::ssl::context>> ListenerCertificates::Add(
    const std::string& listener_name) {
  Listener l;
  l.settings = ListenerTlsSettings(config_, listener_name);
  l.stamps = Stamps(l.settings);
  STRATA_ASSIGN_OR_RETURN(l.context, net::MakeServerTlsContext(l.settings));
  l.dynamic_seen = config_.Dynamic().get();
  l.checked_ms = Clock::Real()->MonotonicMs();
  auto context = l.context;
  std::lock_guard lock(mu_);
  listeners_[listener_name] = std::move(l);
  return context;
}

std::shared_ptr<asio::ssl::context> ListenerCertificates::Current(
    const std::string& listener_name) {
  std::lock_guard lock(mu_);
  auto it = listeners_.find(listener_name);
  if (it == listeners_.end()) return nullptr;
  Listener& l = it->second;
  const int64_t now = Clock::Real()->MonotonicMs();
  if (config_.Dynamic().get() != l.dynamic_seen || now - l.checked_ms >= kRecheckMs) {
    Refresh(listener_name, l, now);
  }
  return l.context;
}

void ListenerCertificates::Refresh(const std::string& name, Listener& l, int64_t now_ms) {
  auto dynamic = config_.Dynamic();
  l.dynamic_seen = dynamic.get();
  l.checked_ms = now_ms;
  net::TlsSettings settings = ListenerTlsSettings(config_, name, dynamic->broker);
  FileStamps stamps = Stamps(settings);
  if (settings == l.settings && stamps == l.stamps) return;
  // Looked at once per change, whatever the outcome: a bad file is logged
  // once, not on every connection.
  l.settings = settings;
  l.stamps = stamps;
  auto context = net::MakeServerTlsContext(settings);
  std::optional<std::string> refused;
  if (!context.ok()) {
    refused = context.error().message;
  } else {
    refused = net::CertificateIdentityChange(*l.context, **context);
  }
  if (refused) {
    Log()->warn("listener {}: keeping its TLS certificate, the new keystore is refused: {}", name,
                *refused);
    return;
  }
  l.context = std::move(context).value();
  Log()->info("listener {}: TLS keystore and truststore reloaded ({})", name,
              settings.keystore_location.empty() ? "inline PEM" : settings.keystore_location);
}

std::optional<std::string> ListenerCertificates::InvalidReason(
    const std::map<std::string, std::string>& proposed) const {
  std::lock_guard lock(mu_);
  for (const auto& [key, value] : proposed) {
    if (!config::BrokerConfig::IsDynamicListenerSsl(key)) continue;
    const std::string listener = ListenerOfKey(key);
    bool known = false;
    for (const auto& [name, l] : listeners_) known = known || ListenerKeyName(name) == listener;
    if (!known) {
      return fmt::format("Cannot update {}: {} is not an SSL or SASL_SSL listener of this broker",
                         key, listener);
    }
  }
  for (const auto& [name, l] : listeners_) {
    net::TlsSettings settings = ListenerTlsSettings(config_, name, proposed);
    if (settings == l.settings && Stamps(settings) == l.stamps) continue;
    auto context = net::MakeServerTlsContext(settings);
    if (!context.ok()) return std::string(kValidationFailed) + context.error().message;
    if (auto changed = net::CertificateIdentityChange(*l.context, **context)) {
      return std::string(kValidationFailed) + *changed;
    }
  }
  return std::nullopt;
}

}  // namespace strata::broker
