#pragma once
// The records the transaction coordinator keeps in __transaction_state, in
// Kafka's formats (transaction-coordinator/src/main/resources/common/message/
// TransactionLogKey.json, TransactionLogValue.json) so a log written by Kafka
// can be loaded here and vice versa. One record per transactional id and
// transition; compaction keeps the latest.
//   key   = int16 version 0 + string TransactionalId (never flexible)
//   value = int16 version + TransactionLogValue, or null (a tombstone: the
//           transactional id expired and was removed)
// Value v0 is classic; v1 (written once transaction.version >= 1) is the same
// fields in flexible encoding plus top-level tagged fields 0
// PreviousProducerId, 1 NextProducerId, 2 ClientTransactionVersion. Tags we do
// not know (later Kafka releases add more) are skipped on read.
// Pure functions; no state, safe from any thread.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace strata::coordinator {

inline constexpr int16_t kTxnLogKeyVersion = 0;
inline constexpr int16_t kTxnLogValueV0 = 0;
inline constexpr int16_t kTxnLogValueV1 = 1;  // first flexible version

// Kafka's TransactionState ids (TransactionState.java), persisted as int8.
// Dead and PrepareEpochFence live only in memory but are valid ids on read.
enum class TxnStatus : int8_t {
  kEmpty = 0,
  kOngoing = 1,
  kPrepareCommit = 2,
  kPrepareAbort = 3,
  kCompleteCommit = 4,
  kCompleteAbort = 5,
  kDead = 6,
  kPrepareEpochFence = 7,
};

// Kafka's state name ("Empty", "PrepareCommit", ...), as DescribeTransactions
// and ListTransactions report it; "Unknown" outside the enum.
std::string_view TxnStatusName(TxnStatus status);
// The status named `name` (Kafka's TransactionState.fromName: exact, case
// sensitive, Dead and PrepareEpochFence included), or nullopt.
std::optional<TxnStatus> TxnStatusFromName(std::string_view name);

// TransactionLogValue. Producer ids and epochs stay plain integers: they are
// wire values here, and Strata has no strong producer id type yet.
struct TxnLogValue {
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t timeout_ms = 0;
  TxnStatus status = TxnStatus::kEmpty;
  // Topic -> partition ids in the transaction. Written null when status is
  // Empty (which must have none), else as an array, possibly empty. Decoding
  // yields ids sorted and deduplicated (Kafka keeps a set), and nothing for
  // Empty: Kafka ignores the array then.
  std::map<std::string, std::vector<int32_t>> partitions;
  int64_t last_update_ms = -1;
  int64_t start_ms = -1;
  // Tagged fields of v1; v0 cannot carry them, so they read back as defaults.
  int64_t previous_producer_id = -1;
  int64_t next_producer_id = -1;
  int16_t client_transaction_version = 0;
  bool operator==(const TxnLogValue&) const = default;
};

// A decoded record: the id and its value, or nullopt for a tombstone.
struct TxnLogRecord {
  std::string transactional_id;
  std::optional<TxnLogValue> value;
};

Bytes EncodeTxnLogKey(std::string_view transactional_id);
// `version` is kTxnLogValueV0 or kTxnLogValueV1; anything else is a bug.
Bytes EncodeTxnLogValue(const TxnLogValue& value, int16_t version);

// kCorrupt on truncated or malformed input; kUnsupported for a key version
// other than 0 (the loader skips such records with a warning, as Kafka does).
Result<std::string> DecodeTxnLogKey(ByteView key);
// kUnsupported for a version outside 0-1; kCorrupt on truncated or malformed
// input, including an unknown status id.
Result<TxnLogValue> DecodeTxnLogValue(ByteView value);
// Both halves of a record; `value` nullopt = a tombstone.
Result<TxnLogRecord> DecodeTxnLogRecord(ByteView key, std::optional<ByteView> value);

}  // namespace strata::coordinator
