#pragma once
// ProbeListener: whether anything accepts TCP connections at host:port, for
// telling a dead broker process from a slow or unreachable one. Only a
// refusal (an RST to the SYN) is proof that nothing listens: a host that is
// down, partitioned away or overloaded does not answer at all, and that is
// reported as kNoAnswer, never as kRefused.
//
// Thread-safety: a plain blocking function (it waits at most `timeout`).
#include <chrono>
#include <cstdint>
#include <string>

namespace strata::net {

enum class ListenerState {
  kAccepting,  // a connection was established (and closed again at once)
  kRefused,    // the host answered that nothing listens on the port
  kNoAnswer,   // timeout, unreachable network or host, unresolvable name
};

const char* ToString(ListenerState state);

ListenerState ProbeListener(const std::string& host, uint16_t port,
                            std::chrono::milliseconds timeout);

}  // namespace strata::net
