#include "broker/listener_sasl.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <stop_token>

#include "security/jaas.h"
#include "security/sasl_plain.h"

namespace strata::broker {

namespace {

bool IsSasl(config::SecurityProtocol p) {
  return p == config::SecurityProtocol::kSaslPlaintext || p == config::SecurityProtocol::kSaslSsl;
}

bool Supported(const std::string& mechanism) {
  return mechanism == "PLAIN" || mechanism == "OAUTHBEARER" ||
         security::ScramMechanismFromName(mechanism).has_value();
}

size_t AppendBody(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

// libcurl's progress callback (called about once a second even while
// nothing arrives): a non-zero return aborts the transfer once the JwksSource
// that asked for it is being destroyed.
int AbortWhenStopped(void* stop, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::stop_token*>(stop)->stop_requested() ? 1 : 0;
}

// GET of an http(s) JWKS endpoint, on the JwksSource's refresh thread.
Result<std::string> HttpGet(const std::string& url, std::stop_token stop) {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return MakeError(Errc::kIoError, "curl_easy_init failed");
  std::string body;
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_XFERINFOFUNCTION, AbortWhenStopped);
  curl_easy_setopt(curl.get(), CURLOPT_XFERINFODATA, &stop);
  curl_easy_setopt(curl.get(), CURLOPT_NOPROGRESS, 0L);
  const CURLcode rc = curl_easy_perform(curl.get());
  if (rc != CURLE_OK) {
    return MakeError(Errc::kUnavailable, fmt::format("GET {}: {}", url, curl_easy_strerror(rc)));
  }
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {
    return MakeError(Errc::kUnavailable, fmt::format("GET {}: HTTP {}", url, status));
  }
  return body;
}

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string ListenerKeyName(const std::string& listener_name) {
  std::string lower = listener_name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

SaslMechanisms::~SaslMechanisms() = default;

Result<std::unique_ptr<SaslMechanisms>> SaslMechanisms::Create(const config::BrokerConfig& config,
                                                               ScramLookup scram) {
  std::unique_ptr<SaslMechanisms> out(new SaslMechanisms());
  out->scram_ = std::move(scram);
  out->max_reauth_ms_ = config.GetLong("connections.max.reauth.ms");
  for (const config::Endpoint& l : config.listeners()) {
    if (IsSasl(l.protocol)) STRATA_RETURN_IF_ERROR(out->AddListener(config, l.listener_name));
  }
  return out;
}

Status SaslMechanisms::AddListener(const config::BrokerConfig& config, const std::string& name) {
  const std::string lower = ListenerKeyName(name);
  const std::string key = "listener.name." + lower + ".sasl.enabled.mechanisms";
  Listener listener;
  listener.mechanisms = config::SplitList(config.ListenerValue(lower, "sasl.enabled.mechanisms")
                                              .value_or(config.Get("sasl.enabled.mechanisms")));
  if (listener.mechanisms.empty()) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("listener {}: no SASL mechanism enabled ({})", name, key));
  }
  for (const std::string& m : listener.mechanisms) {
    if (!Supported(m)) {
      return MakeError(Errc::kInvalidArgument,
                       fmt::format("listener {}: SASL mechanism {} is not supported (set {} or "
                                   "sasl.enabled.mechanisms to PLAIN, SCRAM-SHA-256, "
                                   "SCRAM-SHA-512, OAUTHBEARER)",
                                   name, m, key));
    }
  }
  if (std::find(listener.mechanisms.begin(), listener.mechanisms.end(), "PLAIN") !=
      listener.mechanisms.end()) {
    const std::string jaas_key = "listener.name." + lower + ".plain.sasl.jaas.config";
    auto text = config.ListenerValue(lower, "plain.sasl.jaas.config");
    if (!text) {
      return MakeError(
          Errc::kInvalidArgument,
          fmt::format("listener {} enables PLAIN: {} must name its users", name, jaas_key));
    }
    auto jaas = security::ParseJaasConfig(*text);
    if (!jaas.ok()) {
      return MakeError(Errc::kInvalidArgument,
                       fmt::format("{}: {}", jaas_key, jaas.error().message));
    }
    listener.plain_users = security::PlainUsers(*jaas);
  }
  if (std::find(listener.mechanisms.begin(), listener.mechanisms.end(), "OAUTHBEARER") !=
      listener.mechanisms.end()) {
    STRATA_RETURN_IF_ERROR(AddOAuthBearer(config, name));
  }
  listeners_[name] = std::move(listener);
  return Status::Ok();
}

Status SaslMechanisms::AddOAuthBearer(const config::BrokerConfig& config, const std::string& name) {
  const std::string lower = ListenerKeyName(name);
  auto get = [&](const std::string& key) {
    return config.ListenerValue(lower, key).value_or(config.Get(key));
  };
  security::JwksSourceOptions source;
  source.url = get("sasl.oauthbearer.jwks.endpoint.url");
  if (source.url.empty()) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("listener {} enables OAUTHBEARER: "
                                 "sasl.oauthbearer.jwks.endpoint.url must say where the token "
                                 "signing keys are",
                                 name));
  }
  source.refresh_ms = std::stoll(get("sasl.oauthbearer.jwks.endpoint.refresh.ms"));
  source.fetch = HttpGet;
  auto opened = security::JwksSource::Open(std::move(source));
  if (!opened.ok()) {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("listener {}: sasl.oauthbearer.jwks.endpoint.url: {}", name,
                                 opened.error().message));
  }
  jwks_[name] = std::shared_ptr<security::JwksSource>(std::move(opened).value());
  security::OAuthBearerValidation v;
  v.expected_audience = config::SplitList(get("sasl.oauthbearer.expected.audience"));
  if (auto issuer = get("sasl.oauthbearer.expected.issuer"); !issuer.empty()) {
    v.expected_issuer = issuer;
  }
  v.sub_claim_name = get("sasl.oauthbearer.sub.claim.name");
  v.scope_claim_name = get("sasl.oauthbearer.scope.claim.name");
  v.clock_skew_ms = std::stoll(get("sasl.oauthbearer.clock.skew.seconds")) * 1000;
  oauth_[name] = std::move(v);
  return Status::Ok();
}

const std::vector<std::string>& SaslMechanisms::Enabled(const std::string& listener) const {
  static const std::vector<std::string> kNone;
  auto it = listeners_.find(listener);
  return it == listeners_.end() ? kNone : it->second.mechanisms;
}

Result<std::unique_ptr<security::SaslServer>> SaslMechanisms::Start(
    const std::string& listener, const std::string& mechanism) const {
  auto it = listeners_.find(listener);
  if (it == listeners_.end() ||
      std::find(it->second.mechanisms.begin(), it->second.mechanisms.end(), mechanism) ==
          it->second.mechanisms.end()) {
    return MakeError(Errc::kUnsupported, fmt::format("Unsupported SASL mechanism {}", mechanism));
  }
  if (mechanism == "PLAIN") {
    const auto* users = &it->second.plain_users;
    return security::MakePlainServer([users](std::string_view user) -> std::optional<std::string> {
      auto u = users->find(std::string(user));
      if (u == users->end()) return std::nullopt;
      return u->second;
    });
  }
  if (mechanism == "OAUTHBEARER") {
    std::shared_ptr<security::JwksSource> keys = jwks_.at(listener);
    // A kid the keys lack may be a key the provider has just rotated in.
    return security::MakeOAuthBearerServer(
        [keys] { return keys->Current(); }, oauth_.at(listener), WallClockMs,
        [keys](std::string_view kid) { keys->RequestRefresh(kid); });
  }
  const security::ScramMechanism scram = *security::ScramMechanismFromName(mechanism);
  return security::MakeScramServer(
      scram, [this, scram](std::string_view user) { return scram_(scram, user); });
}

}  // namespace strata::broker
