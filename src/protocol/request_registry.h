#pragma once
// The table of request types the broker understands: api key, supported
// version range and first flexible version, taken from the message structs in
// protocol/messages/. Used to build the ApiVersions response, to pick the
// request header version, and (DecodeRequestBody) by tests and the fuzzer.
// Immutable after first use; safe to call from any thread.
#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace strata::protocol {

struct ApiRange {
  int16_t key;
  int16_t min;
  int16_t max;
  int16_t first_flexible;  // > max when the API has no flexible version
};

// Every supported API, sorted by key.
const std::vector<ApiRange>& SupportedApis();

// nullptr when the key is not supported.
const ApiRange* FindApi(int16_t key);

// Whether a request of this key/version uses the flexible encoding (request
// header v2, compact fields). Versions above our max count as flexible when
// the API is flexible at all (flexibility is never dropped once introduced);
// unknown keys are not flexible.
bool RequestIsFlexible(int16_t key, int16_t version);

// Decodes a request body (after the header) with the struct for `key` and
// discards the result. Errc::kUnsupported for an unknown key or a version out
// of range, Errc::kCorrupt for malformed input. Records fields are not parsed.
Status DecodeRequestBody(int16_t key, int16_t version, MutableByteView body);

}  // namespace strata::protocol
