#pragma once
// Decoding requests and encoding responses for handlers, so each handler only
// deals with its message structs.
#include <algorithm>

#include "base/result.h"
#include "net/server.h"
#include "protocol/header.h"
#include "protocol/message.h"

namespace strata::kafka {

template <class Req>
Result<Req> DecodeRequest(net::Request& request) {
  return protocol::Decode<Req>(request.body, request.header.api_version, request.flexible);
}

// Response header v1 when the request was flexible, v0 otherwise.
// With `splices`, records held as file regions are left for the server to
// sendfile (see net::Request::response_splices).
// A response with throttle_time_ms gets the request quota's throttle there
// if larger than the one the handler set (a byte-rate quota's): Kafka sends
// the max of the two (KIP-219). The request's time is charged here, as late
// as the throttle can still go into the response.
template <class Resp>
Bytes EncodeResponse(net::Request& request, Resp& response, FileSplices* splices = nullptr) {
  if constexpr (requires { response.throttle_time_ms; }) {
    response.throttle_time_ms =
        std::max(response.throttle_time_ms, net::ChargeRequestTime(request));
  }
  Bytes out;
  out.reserve(256);
  protocol::WriteResponseHeader(out, request.header.correlation_id, request.flexible);
  protocol::WireWriter writer(out, request.flexible, splices);
  response.Serde(writer, request.header.api_version);
  return out;
}

using HandlerResult = Result<std::optional<Bytes>>;

}  // namespace strata::kafka
