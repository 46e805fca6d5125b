#pragma once
// The transaction coordinator's records in __transaction_state, kept through
// a CoordinatorLog: one record per transition of a transactional id (in
// txn_records.h's format, Kafka's), and a partition's state loaded back from
// it: the latest record of each id wins, a tombstone removes the id (it
// expired). A key of a version this build does not know is skipped, as Kafka
// does; a value that does not decode fails the load.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "coordinator/coordinator_log.h"
#include "coordinator/txn_records.h"

namespace strata::coordinator {

inline constexpr const char* kTransactionStateTopic = "__transaction_state";

// Appends the record of `transactional_id` to `partition`: `value` encoded at
// `value_version`, or a tombstone when nullopt.
Status AppendTxnRecord(CoordinatorLog& log, int32_t partition, std::string_view transactional_id,
                       const std::optional<TxnLogValue>& value, int16_t value_version);

// What a partition of __transaction_state holds.
struct LoadedTxnPartition {
  std::map<std::string, TxnLogValue> transactions;  // by transactional id
  int64_t records = 0;                              // records read
  int64_t skipped = 0;                              // keys of unknown versions
};
Result<LoadedTxnPartition> LoadTxnPartition(const CoordinatorLog& log, int32_t partition);

}  // namespace strata::coordinator
