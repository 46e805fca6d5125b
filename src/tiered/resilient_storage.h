#pragma once
// The standard decorator stack over a backend:
// CircuitBreaker(RetryingStorage(HedgedReader(inner))). The breaker sees whole calls (after
// retries), so an outage opens it after failure_threshold calls and later calls fail fast; retries
// happen below it, hedging below those, closest to the backend, so each retry attempt may hedge.
// The layers stay reachable for their counters.
#include <memory>

#include "tiered/circuit_breaker.h"
#include "tiered/hedged_reader.h"
#include "tiered/retrying_storage.h"

namespace strata::tiered {

struct ResilienceOptions {
  RetryOptions retry;
  HedgeOptions hedge;
  BreakerOptions breaker;
  bool hedge_reads = true;
};

struct ResilienceCounters {
  RetryCounters retry;
  HedgeCounters hedge;
  BreakerCounters breaker;
};

struct ResilientStorage {
  std::unique_ptr<RemoteStorage> storage;  // the outermost layer: use this one
  CircuitBreaker* breaker = nullptr;       // owned by `storage`
  RetryingStorage* retry = nullptr;
  HedgedReader* hedge = nullptr;  // null when hedge_reads is false

  ResilienceCounters counters() const;
};

ResilientStorage MakeResilientStorage(std::unique_ptr<RemoteStorage> backend,
                                      ResilienceOptions options);

}  // namespace strata::tiered
