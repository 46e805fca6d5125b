#include "tiered/resilient_storage.h"

namespace strata::tiered {

ResilienceCounters ResilientStorage::counters() const {
  ResilienceCounters c;
  if (retry) c.retry = retry->counters();
  if (hedge) c.hedge = hedge->counters();
  if (breaker) c.breaker = breaker->counters();
  return c;
}

ResilientStorage MakeResilientStorage(std::unique_ptr<RemoteStorage> backend,
                                      ResilienceOptions options) {
  ResilientStorage out;
  std::unique_ptr<RemoteStorage> s = std::move(backend);
  if (options.hedge_reads) {
    auto hedge = std::make_unique<HedgedReader>(std::move(s), options.hedge);
    out.hedge = hedge.get();
    s = std::move(hedge);
  }
  auto retry = std::make_unique<RetryingStorage>(std::move(s), std::move(options.retry));
  out.retry = retry.get();
  auto breaker = std::make_unique<CircuitBreaker>(std::move(retry), std::move(options.breaker));
  out.breaker = breaker.get();
  out.storage = std::move(breaker);
  return out;
}

}  // namespace strata::tiered
