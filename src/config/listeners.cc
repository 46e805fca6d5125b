#include "config/listeners.h"

#include <algorithm>
#include <map>
#include <set>

#include "config/broker_config.h"
#include "config/config_def.h"

namespace strata::config {

namespace {

constexpr std::pair<SecurityProtocol, std::string_view> kProtocolNames[] = {
    {SecurityProtocol::kPlaintext, "PLAINTEXT"},
    {SecurityProtocol::kSsl, "SSL"},
    {SecurityProtocol::kSaslPlaintext, "SASL_PLAINTEXT"},
    {SecurityProtocol::kSaslSsl, "SASL_SSL"},
};

// listener.security.protocol.map: listener name -> protocol.
std::map<std::string, SecurityProtocol> ProtocolMap(const std::string& value) {
  std::map<std::string, SecurityProtocol> out;
  for (const std::string& entry : SplitList(value)) {
    const size_t colon = entry.find(':');
    if (colon == std::string::npos || colon == 0) {
      throw ConfigError("listener.security.protocol.map: expected NAME:PROTOCOL, got '" + entry +
                        "'");
    }
    const std::string name = entry.substr(0, colon);
    auto protocol = ParseSecurityProtocol(entry.substr(colon + 1));
    if (!protocol) {
      throw ConfigError("listener.security.protocol.map: unknown security protocol '" +
                        entry.substr(colon + 1) + "' for listener " + name);
    }
    if (!out.emplace(name, *protocol).second) {
      throw ConfigError("listener.security.protocol.map: listener " + name + " mapped twice");
    }
  }
  return out;
}

std::vector<Endpoint> ParseList(const std::string& key, const std::string& value,
                                const std::map<std::string, SecurityProtocol>& protocols) {
  std::vector<Endpoint> out;
  std::set<std::string> names;
  for (const std::string& item : SplitList(value)) {
    Endpoint ep = ParseEndpoint(key, item);
    auto protocol = protocols.find(ep.listener_name);
    if (protocol == protocols.end()) {
      throw ConfigError(key + ": listener " + ep.listener_name +
                        " has no security protocol in listener.security.protocol.map");
    }
    ep.protocol = protocol->second;
    if (!names.insert(ep.listener_name).second) {
      throw ConfigError(key + ": listener " + ep.listener_name + " given twice");
    }
    out.push_back(std::move(ep));
  }
  return out;
}

}  // namespace

std::optional<SecurityProtocol> ParseSecurityProtocol(std::string_view name) {
  for (const auto& [protocol, text] : kProtocolNames) {
    if (text == name) return protocol;
  }
  return std::nullopt;
}

std::string_view SecurityProtocolName(SecurityProtocol protocol) {
  for (const auto& [p, text] : kProtocolNames) {
    if (p == protocol) return text;
  }
  return "UNKNOWN";
}

Endpoint ParseEndpoint(const std::string& key, const std::string& value) {
  Endpoint ep;
  size_t scheme = value.find("://");
  if (scheme == std::string::npos)
    throw ConfigError(key + ": expected NAME://host:port, got '" + value + "'");
  ep.listener_name = value.substr(0, scheme);
  std::string hostport = value.substr(scheme + 3);
  size_t colon = hostport.rfind(':');
  if (colon == std::string::npos) throw ConfigError(key + ": missing port in '" + value + "'");
  ep.host = hostport.substr(0, colon);
  if (ep.host.size() > 1 && ep.host.front() == '[') ep.host = ep.host.substr(1, ep.host.size() - 2);
  if (ep.host.empty()) ep.host = "0.0.0.0";
  try {
    long port = std::stol(hostport.substr(colon + 1));
    if (port < 0 || port > 65535) throw ConfigError(key + ": port out of range in '" + value + "'");
    ep.port = static_cast<uint16_t>(port);
  } catch (const std::logic_error&) {
    throw ConfigError(key + ": invalid port in '" + value + "'");
  }
  return ep;
}

ListenerConfig ListenerConfig::From(const BrokerConfig& config) {
  const auto protocols = ProtocolMap(config.Get("listener.security.protocol.map"));
  ListenerConfig out;
  out.listeners = ParseList("listeners", config.Get("listeners"), protocols);
  if (out.listeners.empty()) throw ConfigError("listeners: at least one listener is required");
  std::set<uint16_t> ports;
  for (const Endpoint& ep : out.listeners) {
    if (ep.port != 0 && !ports.insert(ep.port).second) {
      throw ConfigError("listeners: port " + std::to_string(ep.port) + " used twice");
    }
  }
  std::vector<Endpoint> given;
  if (config.IsExplicit("advertised.listeners")) {
    given = ParseList("advertised.listeners", config.Get("advertised.listeners"), protocols);
  }
  // Each listener is advertised as given, or as it listens (a wildcard host
  // advertised as loopback).
  for (const Endpoint& ep : out.listeners) {
    auto it = std::find_if(given.begin(), given.end(),
                           [&](const Endpoint& g) { return g.listener_name == ep.listener_name; });
    Endpoint advertised = it != given.end() ? *it : ep;
    if (advertised.host == "0.0.0.0" || advertised.host == "::") advertised.host = "127.0.0.1";
    out.advertised.push_back(std::move(advertised));
  }
  for (const Endpoint& g : given) {
    if (out.Advertised(g.listener_name) == nullptr) {
      throw ConfigError("advertised.listeners: " + g.listener_name + " is not in listeners");
    }
  }
  out.inter_broker = config.Get("inter.broker.listener.name");
  if (!out.inter_broker.empty()) {
    if (config.IsExplicit("security.inter.broker.protocol")) {
      throw ConfigError(
          "inter.broker.listener.name and security.inter.broker.protocol may not both be set");
    }
    if (out.Advertised(out.inter_broker) == nullptr) {
      throw ConfigError("inter.broker.listener.name: " + out.inter_broker + " is not in listeners");
    }
    return out;
  }
  // As Kafka: the listener named after the inter-broker protocol; a broker
  // with one listener uses it whatever its name.
  out.inter_broker = config.Get("security.inter.broker.protocol");
  if (out.Advertised(out.inter_broker) == nullptr) {
    if (out.listeners.size() != 1) {
      throw ConfigError("inter.broker.listener.name: not set, and no listener is named " +
                        out.inter_broker + " (security.inter.broker.protocol)");
    }
    out.inter_broker = out.listeners.front().listener_name;
  }
  return out;
}

const Endpoint* ListenerConfig::Advertised(std::string_view listener_name) const {
  for (const Endpoint& ep : advertised) {
    if (ep.listener_name == listener_name) return &ep;
  }
  return nullptr;
}

}  // namespace strata::config
