#pragma once
// Plain counter snapshots of the RemoteStorage decorators, for logs, the admin API and (later)
// Prometheus export. Each decorator keeps atomics and returns one of these by value.
#include <cstdint>

namespace strata::tiered {

struct RetryCounters {
  uint64_t calls = 0;      // calls made to the decorator
  uint64_t attempts = 0;   // calls made to the wrapped store (>= calls)
  uint64_t retries = 0;    // attempts after the first
  uint64_t failures = 0;   // calls that returned an error to the caller
  uint64_t exhausted = 0;  // of those, failed with a retriable error (attempts or deadline ran out)
};

struct HedgeCounters {
  uint64_t reads = 0;           // Get calls
  uint64_t hedges_fired = 0;    // second reads started because the first passed the threshold
  uint64_t hedges_won = 0;      // second reads that answered first
  uint64_t hedges_skipped = 0;  // reads past the threshold not hedged (budget or in-flight cap)
  uint64_t failures = 0;        // Get calls that returned an error
};

enum class BreakerState { kClosed = 0, kOpen = 1, kHalfOpen = 2 };
const char* BreakerStateName(BreakerState s);

struct BreakerCounters {
  BreakerState state = BreakerState::kClosed;
  uint64_t calls = 0;        // calls let through to the wrapped store
  uint64_t failures = 0;     // of those, failed with a retriable (health) error
  uint64_t rejected = 0;     // calls failed fast while open or half-open
  uint64_t opened = 0;       // transitions to open (from closed or a failed probe)
  uint64_t half_opened = 0;  // probes started
  uint64_t closed = 0;       // transitions back to closed (successful probes)
};

struct FaultCounters {
  uint64_t calls = 0;
  uint64_t injected_failures = 0;
  uint64_t injected_delays = 0;
};

}  // namespace strata::tiered
