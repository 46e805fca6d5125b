#pragma once
// The Kafka APIs this broker serves, one row each: the function that answers
// a request, and for the APIs only the active controller may serve, the
// response a client gets when no controller can take it. Versions come from
// the request struct (protocol::FindApi), so a row never repeats them.
// Dispatch (kafka::Dispatcher), ApiVersions, Envelope and controller forwarding
// all read this table; serving a new API is its message struct
// (protocol/messages/, listed in protocol/request_registry.cc) and its handler
// with a row here. Immutable; safe from any thread.
#include <asio/awaitable.hpp>
#include <cstdint>
#include <span>
#include <string>

#include "kafka/broker_context.h"
#include "kafka/codec.h"
#include "net/server.h"
#include "protocol/error_code.h"

namespace strata::kafka {

struct ApiHandler {
  using Handle = HandlerResult (*)(BrokerContext&, net::Request&);
  using HandleAsync = asio::awaitable<HandlerResult> (*)(BrokerContext&, net::Request&);
  using Unavailable = HandlerResult (*)(net::Request&, protocol::ErrorCode, const std::string&);

  int16_t key;
  // One of the two, except for Envelope (whose handler needs dispatch
  // itself; Dispatcher calls it).
  Handle handle = nullptr;
  HandleAsync handle_async = nullptr;
  // Set exactly for the controller-bound APIs: a broker that is not the
  // active controller forwards them to it, and answers with this (every item
  // failed with `code`) when no controller takes them in time.
  Unavailable controller_unavailable = nullptr;
  // Listed in ApiVersions. Envelope is served (from other brokers) but not
  // advertised: Kafka's brokers list it on the controller listener only.
  bool advertised = true;

  bool controller_bound() const { return controller_unavailable != nullptr; }
};

// Every served API, sorted by key.
std::span<const ApiHandler> ServedApis();

// nullptr when this broker does not serve the key.
const ApiHandler* FindServedApi(int16_t key);

}  // namespace strata::kafka
