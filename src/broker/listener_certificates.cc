#include "broker/listener_certificates.h"

#include <fmt/format.h>

#include <fstream>
#include <iterator>

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
    // The bytes, not the modification time: a rewrite within the clock's
    // granularity, or one that keeps the time, is still noticed.
    std::ifstream in(*path, std::ios::binary);
    if (!in.is_open()) {
      stamps[*path] = 0;  // missing or unreadable
      continue;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    stamps[*path] = in.bad() ? 0 : std::hash<std::string>{}(bytes) | 1;
  }
  return stamps;
}

Result<ListenerCertificates::Contexts> ListenerCertificates::Build(const net::TlsSettings& settings,
                                                                   bool with_client) {
  Contexts built;
  built.settings = settings;
  built.stamps = Stamps(settings);
  STRATA_ASSIGN_OR_RETURN(built.server, net::MakeServerTlsContext(settings));
  if (with_client) {
    STRATA_ASSIGN_OR_RETURN(built.client, net::MakeClientTlsContext(settings));
  }
  return built;
}

Result<std::shared_ptr<asio::ssl::context>> ListenerCertificates::Add(
    const std::string& listener_name, bool with_client) {
  Listener l;
  l.with_client = with_client;
  // The generation first: configs changing meanwhile are seen as newer.
  auto dynamic = config_.Dynamic();
  l.dynamic_generation = dynamic->generation;
  const net::TlsSettings settings = ListenerTlsSettings(config_, listener_name, dynamic->broker);
  STRATA_ASSIGN_OR_RETURN(l.applied, Build(settings, with_client));
  l.seen = l.applied.settings;
  l.seen_stamps = l.applied.stamps;
  l.checked_ms = Clock::Real()->MonotonicMs();
  auto context = l.applied.server;
  std::lock_guard lock(mu_);
  listeners_[listener_name] = std::move(l);
  return context;
}

std::shared_ptr<asio::ssl::context> ListenerCertificates::Current(
    const std::string& listener_name) {
  std::unique_lock lock(mu_);
  const Listener* l = Refreshed(listener_name, lock);
  return l != nullptr ? l->applied.server : nullptr;
}

std::shared_ptr<asio::ssl::context> ListenerCertificates::ClientContext(
    const std::string& listener_name) {
  std::unique_lock lock(mu_);
  const Listener* l = Refreshed(listener_name, lock);
  return l != nullptr ? l->applied.client : nullptr;
}

const ListenerCertificates::Listener* ListenerCertificates::Refreshed(
    const std::string& name, std::unique_lock<std::mutex>& lock) {
  auto it = listeners_.find(name);
  if (it == listeners_.end()) return nullptr;
  Listener& l = it->second;
  auto dynamic = config_.Dynamic();
  const int64_t now = Clock::Real()->MonotonicMs();
  if (dynamic->generation == l.dynamic_generation && now - l.checked_ms < kRecheckMs) return &l;
  // Marked first: the other threads go on with the contexts in use.
  l.dynamic_generation = dynamic->generation;
  l.checked_ms = now;
  // A refresh overtaken by a later one (newer configs) leaves everything to
  // it: an older keystore must never replace a newer one.
  const uint64_t refresh = ++l.refreshes;
  const bool with_client = l.with_client;
  lock.unlock();
  const net::TlsSettings settings = ListenerTlsSettings(config_, name, dynamic->broker);
  const FileStamps stamps = Stamps(settings);
  lock.lock();
  if (l.refreshes != refresh) return &l;
  if (settings == l.seen && stamps == l.seen_stamps) return &l;
  l.seen = settings;
  l.seen_stamps = stamps;
  // Back to what is in use (after a refused change): nothing to rebuild.
  if (settings == l.applied.settings && stamps == l.applied.stamps) return &l;
  const auto current = l.applied.server;
  lock.unlock();
  Result<Contexts> built = Build(settings, with_client);
  std::optional<std::string> refused;
  if (!built.ok()) {
    refused = built.error().message;
  } else {
    refused = net::CertificateIdentityChange(*current, *built->server);
  }
  lock.lock();
  if (l.refreshes != refresh) return &l;
  if (refused) {
    Log()->warn("listener {}: keeping its TLS certificate, the new keystore is refused: {}", name,
                *refused);
    // One that did not load may have been caught mid-write: looked at
    // again at the next check.
    if (!built.ok()) l.seen_stamps.clear();
    return &l;
  }
  l.applied = std::move(built).value();
  Log()->info("listener {}: TLS keystore and truststore reloaded ({})", name,
              settings.keystore_location.empty() ? "inline PEM" : settings.keystore_location);
  return &l;
}

std::optional<std::string> ListenerCertificates::InvalidReason(
    const std::map<std::string, std::string>& proposed) const {
  std::map<std::string, Contexts> in_use;  // copied: built outside the lock
  std::map<std::string, bool> with_client;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, l] : listeners_) {
      in_use[name] = l.applied;
      with_client[name] = l.with_client;
    }
  }
  for (const auto& [key, value] : proposed) {
    if (!config::BrokerConfig::IsDynamicListenerSsl(key)) continue;
    const std::string listener = ListenerOfKey(key);
    bool known = false;
    for (const auto& [name, contexts] : in_use) known = known || ListenerKeyName(name) == listener;
    if (!known) {
      return fmt::format("Cannot update {}: {} is not an SSL or SASL_SSL listener of this broker",
                         key, listener);
    }
  }
  for (const auto& [name, applied] : in_use) {
    // Against the settings in use: a keystore refused before is refused
    // again, not taken for one already applied.
    // A listener the proposal leaves alone is not checked (a file of its
    // rewritten in place is the reload's business, and must not refuse
    // another listener's keys); one it names is, files included, as Kafka
    // re-reads a keystore submitted again.
    bool named = false;
    for (const auto& [key, value] : proposed) {
      named = named || (config::BrokerConfig::IsDynamicListenerSsl(key) &&
                        ListenerOfKey(key) == ListenerKeyName(name));
    }
    net::TlsSettings settings = ListenerTlsSettings(config_, name, proposed);
    if (settings == applied.settings && (!named || Stamps(settings) == applied.stamps)) continue;
    auto built = Build(settings, with_client[name]);
    if (!built.ok()) return std::string(kValidationFailed) + built.error().message;
    if (auto changed = net::CertificateIdentityChange(*applied.server, *built->server)) {
      return std::string(kValidationFailed) + *changed;
    }
  }
  return std::nullopt;
}

}  // namespace strata::broker
