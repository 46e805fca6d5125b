#pragma once
// ListenerCertificates: the TLS server contexts of a broker's SSL and
// SASL_SSL listeners, replaced without a restart as Kafka's dynamic
// listener.name.<listener>.ssl.keystore.location (KIP-226) replaces them.
// Each new connection asks for its listener's context; the context is rebuilt
// when this broker's dynamic configs change the listener's keystore or
// truststore settings, or when one of their files is rewritten in place
// (checked at most every kRecheckMs). Connections already open keep the
// context they started with.
//
// A replacement must keep the certificate's subject and subject alternative
// names, as Kafka requires. AlterConfigs refuses one that cannot be used
// (InvalidReason); one that reaches the broker anyway (a file rewritten badly)
// is logged and the working context kept.
//
// Thread-safety: every method may be called from any thread.
#include <asio/ssl/context.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/result.h"
#include "config/broker_config.h"
#include "net/tls_context.h"

namespace strata::broker {

class ListenerCertificates {
 public:
  static constexpr int64_t kRecheckMs = 5000;

  explicit ListenerCertificates(const config::BrokerConfig& config) : config_(config) {}

  // Builds the first context of `listener_name` (start-up: an error stops
  // it). `with_client`: the listener is the inter-broker one, so this broker
  // also connects to others with its keystore and truststore (ClientContext).
  Result<std::shared_ptr<asio::ssl::context>> Add(const std::string& listener_name,
                                                  bool with_client = false);

  // The context for a new connection on `listener_name` (null: not added).
  std::shared_ptr<asio::ssl::context> Current(const std::string& listener_name);
  // The context for a new connection this broker makes to another broker
  // on `listener_name` (null: not added with a client context).
  std::shared_ptr<asio::ssl::context> ClientContext(const std::string& listener_name);

  // Why this broker's dynamic configs may not become `proposed` (each SSL
  // listener's new keystore must load and keep its certificate's identity);
  // nullopt when they may.
  std::optional<std::string> InvalidReason(
      const std::map<std::string, std::string>& proposed) const;

 private:
  // What a keystore or truststore file holds (a digest of its bytes), to
  // notice it rewritten in place.
  using FileStamps = std::map<std::string, uint64_t>;

  // Contexts made from one version of a listener's settings and files.
  struct Contexts {
    net::TlsSettings settings;
    FileStamps stamps;
    std::shared_ptr<asio::ssl::context> server;
    std::shared_ptr<asio::ssl::context> client;  // with_client only
  };

  struct Listener {
    bool with_client = false;
    Contexts applied;  // in use
    // The settings and files last looked at, refused ones too: a bad file
    // is logged once, not on every connection.
    net::TlsSettings seen;
    FileStamps seen_stamps;
    uint64_t dynamic_generation = 0;  // of the dynamic configs last looked at
    int64_t checked_ms = 0;
    uint64_t refreshes = 0;  // refreshes started: the latest one wins
  };

  static FileStamps Stamps(const net::TlsSettings& settings);
  static Result<Contexts> Build(const net::TlsSettings& settings, bool with_client);
  // The listener, its settings or files rechecked when due (contexts are
  // built outside the lock: network threads keep accepting meanwhile).
  const Listener* Refreshed(const std::string& name, std::unique_lock<std::mutex>& lock);

  const config::BrokerConfig& config_;
  mutable std::mutex mu_;
  std::map<std::string, Listener> listeners_;
};

}  // namespace strata::broker
