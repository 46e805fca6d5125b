#pragma once
// Request and response headers. Request header v1 (classic) or v2 (flexible:
// client_id stays int16-length, then tagged fields); response header v0 or
// v1 (flexible). ApiVersions responses always use header v0 (KIP-511).
#include <cstdint>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct RequestHeader {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;
};

// Parses api key, version and correlation id (always readable if the frame is
// at least 8 bytes), then the client id and, if `flexible`, the tagged fields.
// Leaves `reader` at the start of the body.
void ReadRequestHeader(WireReader& reader, RequestHeader& header);
void WriteRequestHeader(WireWriter& writer, const RequestHeader& header);

// Appends a response header. `flexible_header` picks v1.
void WriteResponseHeader(Bytes& out, int32_t correlation_id, bool flexible_header);

}  // namespace strata::protocol
