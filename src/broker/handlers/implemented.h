#pragma once
// Which APIs this broker implements today (advertised in ApiVersions and
// accepted by dispatch). The codec registry knows more APIs than we serve.
#include <cstdint>

namespace strata::broker {

bool IsImplementedApi(int16_t api_key);

}  // namespace strata::broker
