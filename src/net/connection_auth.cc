#include "net/connection_auth.h"

#include <fmt/format.h>

#include "protocol/api_key.h"

namespace strata::net {

std::optional<std::string> RefusedBeforeAuthentication(const ConnectionAuth& auth,
                                                       int16_t api_key) {
  const auto key = static_cast<protocol::ApiKey>(api_key);
  switch (auth.state()) {
    case ConnectionAuth::State::kAwaitingHandshake:
      if (key == protocol::ApiKey::kSaslHandshake) return std::nullopt;
      if (key == protocol::ApiKey::kApiVersions) {
        if (!auth.api_versions_seen()) return std::nullopt;
        return "a second ApiVersions request before SaslHandshake";
      }
      return fmt::format("unexpected {} request before SASL authentication",
                         protocol::ApiKeyName(api_key));
    case ConnectionAuth::State::kAwaitingAuthenticate:
      if (key == protocol::ApiKey::kSaslAuthenticate) return std::nullopt;
      return fmt::format("unexpected {} request during SASL authentication",
                         protocol::ApiKeyName(api_key));
    case ConnectionAuth::State::kAuthenticated:
      // KIP-368: past its lifetime a session may only start re-authenticating.
      if (auth.SessionExpired() && key != protocol::ApiKey::kSaslHandshake) {
        return fmt::format("{} request after the SASL session expired (connections.max.reauth.ms)",
                           protocol::ApiKeyName(api_key));
      }
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace strata::net
