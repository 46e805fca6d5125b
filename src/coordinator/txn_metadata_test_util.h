#pragma once
// For TxnMetadata's tests: the ids, partitions and states they share, and
// metadata loaded in a given state.
#include <gtest/gtest.h>

#include <array>
#include <climits>

#include "coordinator/txn_metadata.h"

namespace strata::coordinator::txn_test {

using protocol::ErrorCode;
using S = TxnStatus;

inline constexpr int64_t kPid = 1000;
inline constexpr int64_t kFresh = 2000;
inline constexpr int32_t kTimeout = 60'000;
inline constexpr int64_t kT0 = 1'700'000'000'000;
inline constexpr int64_t kNow = kT0 + 5'000;
inline constexpr int16_t kMax = INT16_MAX;
inline const TopicPartition kA{"a", 0};
inline const TopicPartition kB{"a", 1};
inline const TopicPartition kC{"b", 0};

inline constexpr std::array<TxnStatus, 8> kAllStates = {
    S::kEmpty,          S::kOngoing,       S::kPrepareCommit, S::kPrepareAbort,
    S::kCompleteCommit, S::kCompleteAbort, S::kDead,          S::kPrepareEpochFence};

// An id loaded from the log in `state` at `epoch`: Ongoing and PrepareX hold
// partitions {a-0, a-1}; everything but Empty started at kT0.
inline TxnMetadata Loaded(TxnStatus state, int16_t epoch, int16_t tv = 0) {
  TxnLogValue v;
  v.producer_id = kPid;
  v.producer_epoch = epoch;
  v.timeout_ms = kTimeout;
  v.status = state;
  if (state == S::kOngoing || state == S::kPrepareCommit || state == S::kPrepareAbort) {
    v.partitions = {{"a", {0, 1}}};
  }
  v.start_ms = state == S::kEmpty ? -1 : kT0;
  v.last_update_ms = kT0 + 10;
  v.client_transaction_version = tv;
  return TxnMetadata::FromLogValue("txn", v);
}

// The outcome asks for a write; the write commits.
inline void Apply(TxnMetadata& md, const TxnOutcome& out) {
  ASSERT_EQ(out.step, TxnStep::kWrite);
  ASSERT_EQ(md.pending(), out.transit.state);
  Status st = md.Complete(out.transit);
  ASSERT_TRUE(st.ok()) << st.error().message;
  ASSERT_FALSE(md.pending());
}

inline EndTxnArgs End(TxnResult result, int16_t epoch, int16_t tv, int64_t pid = kPid) {
  return EndTxnArgs{.producer_id = pid,
                    .producer_epoch = epoch,
                    .result = result,
                    .transaction_version = tv,
                    .now_ms = kNow};
}
inline EndTxnArgs ServerAbort(int16_t epoch, int16_t tv) {
  EndTxnArgs a = End(TxnResult::kAbort, epoch, tv);
  a.from_client = false;
  return a;
}

}  // namespace strata::coordinator::txn_test
