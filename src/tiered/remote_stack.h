#pragma once
// RemoteStackOptions: how a remote store is wrapped before the RemoteLogManager uses it — the
// resilience layers (retry, hedge, breaker; see resilient_storage.h) and, for tests only, a
// FaultInjectingStorage directly over the backend (below every resilience layer, so injected
// delays and failures are seen by hedging and retries exactly as real ones would be).
// Plain value types; OpenRemoteStack is thread-safe.
#include <chrono>
#include <cstdint>
#include <string>

#include "base/result.h"
#include "tiered/remote_storage.h"
#include "tiered/resilient_storage.h"

namespace strata::tiered {

// Test-only fault injection (strata.remote.fault.*). All zero = no fault layer at all.
struct RemoteFaultOptions {
  double get_delay_ratio = 0;  // share of Gets delayed by get_delay
  std::chrono::milliseconds get_delay{0};
  double put_fail_ratio = 0;  // share of Puts failing with kUnavailable (nothing written)
  uint64_t seed = 1;

  bool enabled() const {
    return (get_delay_ratio > 0 && get_delay.count() > 0) || put_fail_ratio > 0;
  }
};

struct RemoteStackOptions {
  RemoteStorageOptions storage;  // the backend's own settings (WebHDFS user, S3 endpoint, ...)
  ResilienceOptions resilience;
  RemoteFaultOptions faults;
};

// Opens `uri` and wraps it as `options` says. Logs a warning when fault injection is on.
Result<ResilientStorage> OpenRemoteStack(const std::string& uri, RemoteStackOptions options);

}  // namespace strata::tiered
