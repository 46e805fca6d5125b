#pragma once
// ConnectionAuth: who is on the other end of one connection, and how far its
// SASL authentication has got. The server creates one per connection and
// hands it to each request in turn (a connection runs one request at a time,
// so it needs no lock); the SaslHandshake and SaslAuthenticate handlers move
// it on, and the server refuses every other request until it is
// authenticated, as Kafka's SaslServerAuthenticator does.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "security/principal.h"
#include "security/sasl_server.h"

namespace strata::net {

class ConnectionAuth {
 public:
  enum class State : uint8_t {
    kAuthenticated,         // requests served (PLAINTEXT and SSL connections start here)
    kAwaitingHandshake,     // SASL: ApiVersions or SaslHandshake only
    kAwaitingAuthenticate,  // SASL: a mechanism chosen; SaslAuthenticate only
  };

  // `sasl`: the listener requires SASL authentication.
  explicit ConnectionAuth(bool sasl)
      : sasl_(sasl), state_(sasl ? State::kAwaitingHandshake : State::kAuthenticated) {}

  bool sasl() const { return sasl_; }
  State state() const { return state_; }
  const security::KafkaPrincipal& principal() const { return principal_; }
  // Set by the TLS handshake (the client certificate's mapped DN).
  void set_principal(security::KafkaPrincipal p) { principal_ = std::move(p); }

  // SaslHandshake accepted `mechanism`: `exchange` runs the rounds. With
  // `raw_tokens` (SaslHandshake v0) the client then sends its tokens as bare
  // size-prefixed frames, not in SaslAuthenticate requests.
  void BeginExchange(std::string mechanism, std::unique_ptr<security::SaslServer> exchange,
                     bool raw_tokens = false) {
    mechanism_ = std::move(mechanism);
    exchange_ = std::move(exchange);
    raw_tokens_ = raw_tokens;
    state_ = State::kAwaitingAuthenticate;
  }
  // Whether the next frame is a bare SASL token (see BeginExchange).
  bool awaiting_raw_token() const { return state_ == State::kAwaitingAuthenticate && raw_tokens_; }
  security::SaslServer* exchange() { return exchange_.get(); }
  const std::string& mechanism() const { return mechanism_; }
  // The exchange succeeded as `principal`; the session ends after
  // `lifetime_ms` (0: never) unless the client re-authenticates (KIP-368).
  void Authenticated(security::KafkaPrincipal principal, int64_t lifetime_ms) {
    principal_ = std::move(principal);
    exchange_.reset();
    state_ = State::kAuthenticated;
    authenticated_once_ = true;
    session_expiry_ms_ = lifetime_ms > 0 ? NowMs() + lifetime_ms : 0;
  }
  // Whether a successful authentication happened before (the next one is a
  // re-authentication, which must keep the principal).
  bool authenticated_once() const { return authenticated_once_; }
  // Whether the session has passed its lifetime: only re-authentication is
  // then allowed on the connection.
  bool SessionExpired() const { return session_expiry_ms_ != 0 && NowMs() >= session_expiry_ms_; }

  // A failed authentication: the server closes the connection once the
  // response carrying the error is written, as Kafka does.
  void Failed() {
    exchange_.reset();
    close_after_response_ = true;
  }
  bool close_after_response() const { return close_after_response_; }

  // Before the handshake a client may be answered ApiVersions once (Kafka's
  // SaslServerAuthenticator refuses a second one; an UNSUPPORTED_VERSION
  // answer does not count, so the client can retry at a lower version).
  bool api_versions_seen() const { return api_versions_seen_; }
  void MarkApiVersionsSeen() { api_versions_seen_ = true; }

  static int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  bool sasl_;
  State state_;
  bool authenticated_once_ = false;
  security::KafkaPrincipal principal_ = security::KafkaPrincipal::Anonymous();
  std::string mechanism_;
  std::unique_ptr<security::SaslServer> exchange_;
  int64_t session_expiry_ms_ = 0;
  bool close_after_response_ = false;
  bool api_versions_seen_ = false;
  bool raw_tokens_ = false;
};

// Why a request of `api_key` may not run on a connection in `auth`'s state
// (nullopt: it may). The server closes the connection with this reason.
std::optional<std::string> RefusedBeforeAuthentication(const ConnectionAuth& auth, int16_t api_key);

}  // namespace strata::net
