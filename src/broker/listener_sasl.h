#pragma once
// The SASL side of the listeners: which mechanisms each SASL listener
// enables (sasl.enabled.mechanisms, per listener as
// listener.name.<l>.sasl.enabled.mechanisms) and the exchange each one runs:
// PLAIN against the users of the listener's JAAS config
// (listener.name.<l>.plain.sasl.jaas.config, its user_<name> entries),
// SCRAM-SHA-256/512 against the credentials in the metadata store,
// OAUTHBEARER against the signing keys of sasl.oauthbearer.jwks.endpoint.url.
// Built once at start-up; Start() is safe from any thread.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "config/broker_config.h"
#include "security/jwks_source.h"
#include "security/oauthbearer.h"
#include "security/sasl_server.h"
#include "security/scram.h"

namespace strata::broker {

class SaslMechanisms {
 public:
  using ScramLookup = std::function<std::optional<security::ScramCredential>(
      security::ScramMechanism, std::string_view user)>;
  // Reads and checks the settings of every SASL listener: an unsupported
  // mechanism or a PLAIN listener without users is kInvalidArgument naming
  // the key.
  static Result<std::unique_ptr<SaslMechanisms>> Create(const config::BrokerConfig& config,
                                                        ScramLookup scram);
  ~SaslMechanisms();

  // The listener's enabled mechanisms (empty for a listener without SASL).
  const std::vector<std::string>& Enabled(const std::string& listener) const;
  // A new exchange of `mechanism` on `listener`; kUnsupported when the
  // listener does not enable it.
  Result<std::unique_ptr<security::SaslServer>> Start(const std::string& listener,
                                                      const std::string& mechanism) const;
  // connections.max.reauth.ms (0: sessions never expire).
  int64_t max_reauth_ms() const { return max_reauth_ms_; }

 private:
  struct Listener {
    std::vector<std::string> mechanisms;
    std::map<std::string, std::string> plain_users;
  };
  SaslMechanisms() = default;
  Status AddListener(const config::BrokerConfig& config, const std::string& name);

  // The OAUTHBEARER validation of `listener` (its keys read once here).
  Status AddOAuthBearer(const config::BrokerConfig& config, const std::string& listener);

  std::map<std::string, Listener> listeners_;
  ScramLookup scram_;
  // OAUTHBEARER: the signing keys and the claims expected, per listener.
  std::map<std::string, std::shared_ptr<security::JwksSource>> jwks_;
  std::map<std::string, security::OAuthBearerValidation> oauth_;
  int64_t max_reauth_ms_ = 0;
};

// The lower-case form of a listener name, as listener.name.<l>.* keys spell it.
std::string ListenerKeyName(const std::string& listener_name);

}  // namespace strata::broker
