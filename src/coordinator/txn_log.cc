#include "coordinator/txn_log.h"

#include <fmt/format.h>

#include <vector>

namespace strata::coordinator {

Status AppendTxnRecord(CoordinatorLog& log, int32_t partition, std::string_view transactional_id,
                       const std::optional<TxnLogValue>& value, int16_t value_version) {
  CoordinatorRecord record;
  record.key = EncodeTxnLogKey(transactional_id);
  if (value) record.value = EncodeTxnLogValue(*value, value_version);
  STRATA_RETURN_IF_ERROR(log.Append(partition, std::vector<CoordinatorRecord>{std::move(record)}));
  return Status::Ok();
}

Result<LoadedTxnPartition> LoadTxnPartition(const CoordinatorLog& log, int32_t partition) {
  LoadedTxnPartition loaded;
  Status failed = Status::Ok();
  auto fail = [&](const Error& error) {
    failed = MakeError(error.code, fmt::format("{}-{}: record {}: {}", log.topic(), partition,
                                               loaded.records, error.message));
  };
  STRATA_RETURN_IF_ERROR(log.Replay(partition, [&](ByteView key, std::optional<ByteView> value) {
    if (!failed.ok()) return;
    ++loaded.records;
    auto id = DecodeTxnLogKey(key);
    if (!id.ok() && id.error().code == Errc::kUnsupported) {
      ++loaded.skipped;  // a key of a version this build does not know
      return;
    }
    if (!id.ok()) return fail(id.error());
    if (!value) {
      loaded.transactions.erase(*id);
      return;
    }
    auto decoded = DecodeTxnLogValue(*value);
    if (!decoded.ok()) return fail(decoded.error());
    loaded.transactions[*id] = std::move(*decoded);
  }));
  STRATA_RETURN_IF_ERROR(failed);
  return loaded;
}

}  // namespace strata::coordinator
