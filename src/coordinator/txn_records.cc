#include "coordinator/txn_records.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/check.h"
#include "protocol/wire.h"

namespace strata::coordinator {

namespace {

using protocol::WireReader;
using protocol::WireWriter;

constexpr uint32_t kTagPreviousProducerId = 0;
constexpr uint32_t kTagNextProducerId = 1;
constexpr uint32_t kTagClientTransactionVersion = 2;
constexpr int8_t kMaxStatusId = static_cast<int8_t>(TxnStatus::kPrepareEpochFence);

// TransactionLogValue.PartitionsSchema as it is on the wire: the map in
// TxnLogValue cannot tell null from empty, nor keep a topic written twice.
struct WireTopic {
  std::string topic;
  std::vector<int32_t> partition_ids;
};

template <class IO>
void SerdeTopic(IO& io, WireTopic& t) {
  io.str(t.topic);
  io.array(t.partition_ids);
  io.tagged_fields();  // every struct has its own section in flexible versions
}

// The non-tagged fields, in schema order, for both directions; the IO knows
// whether lengths are classic or compact. The writer never modifies `v`.
template <class IO>
void SerdeFields(IO& io, TxnLogValue& v, std::optional<std::vector<WireTopic>>& topics) {
  io.i64(v.producer_id);
  io.i16(v.producer_epoch);
  io.i32(v.timeout_ms);
  auto status = static_cast<int8_t>(v.status);
  io.i8(status);
  // Only the reader stores: the writer's `v` may be a const object.
  if constexpr (IO::kDecoding) v.status = static_cast<TxnStatus>(status);  // range-checked later
  io.nullable_array(topics, [&](WireTopic& t) { SerdeTopic(io, t); });
  io.i64(v.last_update_ms);
  io.i64(v.start_ms);
}

// The top-level tagged section of v1, by hand: WireWriter/WireReader helpers
// know at most two fields. Kafka writes a field only when it differs from its
// default, in ascending tag order.
void WriteTaggedFields(WireWriter& w, const TxnLogValue& v) {
  const bool prev = v.previous_producer_id != -1;
  const bool next = v.next_producer_id != -1;
  const bool ctv = v.client_transaction_version != 0;
  w.uvarint(uint32_t(prev) + uint32_t(next) + uint32_t(ctv));
  if (prev) {
    w.uvarint(kTagPreviousProducerId);
    w.uvarint(8);
    w.i64(v.previous_producer_id);
  }
  if (next) {
    w.uvarint(kTagNextProducerId);
    w.uvarint(8);
    w.i64(v.next_producer_id);
  }
  if (ctv) {
    w.uvarint(kTagClientTransactionVersion);
    w.uvarint(2);
    w.i16(v.client_transaction_version);
  }
}

void ReadTaggedFields(WireReader& r, TxnLogValue& v) {
  uint32_t count = 0;
  r.uvarint(count);
  // Each field takes at least two bytes, so a huge count fails on truncation.
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    uint32_t tag = 0, size = 0;
    r.uvarint(tag);
    r.uvarint(size);
    if (!r.ok()) return;
    if (size > r.remaining()) {
      r.fail(fmt::format("tagged field {} of {} bytes beyond input", tag, size));
      return;
    }
    const size_t end = r.position() + size;
    switch (tag) {
      case kTagPreviousProducerId:
        r.i64(v.previous_producer_id);
        break;
      case kTagNextProducerId:
        r.i64(v.next_producer_id);
        break;
      case kTagClientTransactionVersion:
        r.i16(v.client_transaction_version);
        break;
      default:  // a newer Kafka's field: skip it (WireReader has no skip call)
        for (int8_t b = 0; r.ok() && r.position() < end;) r.i8(b);
        break;
    }
    if (r.ok() && r.position() != end) {
      r.fail(fmt::format("tagged field {} has {} bytes, not the field's size", tag, size));
    }
  }
}

// Kafka keeps a set of TopicPartition: merge repeated topics, sort, dedupe.
std::map<std::string, std::vector<int32_t>> ToPartitionMap(std::vector<WireTopic>& topics) {
  std::map<std::string, std::vector<int32_t>> out;
  for (auto& t : topics) {
    auto& ids = out[std::move(t.topic)];
    ids.insert(ids.end(), t.partition_ids.begin(), t.partition_ids.end());
  }
  for (auto& [topic, ids] : out) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  return out;
}

}  // namespace

std::string_view TxnStatusName(TxnStatus status) {
  switch (status) {
    case TxnStatus::kEmpty:
      return "Empty";
    case TxnStatus::kOngoing:
      return "Ongoing";
    case TxnStatus::kPrepareCommit:
      return "PrepareCommit";
    case TxnStatus::kPrepareAbort:
      return "PrepareAbort";
    case TxnStatus::kCompleteCommit:
      return "CompleteCommit";
    case TxnStatus::kCompleteAbort:
      return "CompleteAbort";
    case TxnStatus::kDead:
      return "Dead";
    case TxnStatus::kPrepareEpochFence:
      return "PrepareEpochFence";
  }
  return "Unknown";
}

std::optional<TxnStatus> TxnStatusFromName(std::string_view name) {
  for (int8_t id = static_cast<int8_t>(TxnStatus::kEmpty);
       id <= static_cast<int8_t>(TxnStatus::kPrepareEpochFence); ++id) {
    const auto status = static_cast<TxnStatus>(id);
    if (TxnStatusName(status) == name) return status;
  }
  return std::nullopt;
}

Bytes EncodeTxnLogKey(std::string_view transactional_id) {
  Bytes out;
  WireWriter w(out, false);
  w.i16(kTxnLogKeyVersion);
  w.str(std::string(transactional_id));
  return out;
}

Bytes EncodeTxnLogValue(const TxnLogValue& value, int16_t version) {
  STRATA_CHECK(version == kTxnLogValueV0 || version == kTxnLogValueV1,
               "TransactionLogValue version {}", version);
  // Kafka refuses the same (TransactionLog.valueToBytes): Empty has no partitions.
  STRATA_CHECK(value.status != TxnStatus::kEmpty || value.partitions.empty(),
               "TransactionLogValue: Empty state with {} topics", value.partitions.size());
  std::optional<std::vector<WireTopic>> topics;
  if (value.status != TxnStatus::kEmpty) {
    topics.emplace();
    for (const auto& [topic, ids] : value.partitions) topics->push_back({topic, ids});
  }
  Bytes out;
  WireWriter w(out, false);
  w.i16(version);
  w.set_flexible(version >= kTxnLogValueV1);
  SerdeFields(w, const_cast<TxnLogValue&>(value), topics);  // NOLINT: WireWriter only reads
  if (version >= kTxnLogValueV1) WriteTaggedFields(w, value);
  return out;
}

Result<std::string> DecodeTxnLogKey(ByteView key) {
  Bytes copy(key.begin(), key.end());  // WireReader wants a mutable view
  WireReader r(MutableByteView(copy), false);
  int16_t version = -1;
  r.i16(version);
  if (!r.ok()) return MakeError(Errc::kCorrupt, "TransactionLogKey: " + r.error());
  if (version != kTxnLogKeyVersion) {
    return MakeError(Errc::kUnsupported, fmt::format("TransactionLogKey version {}", version));
  }
  std::string id;
  r.str(id);
  if (!r.ok()) return MakeError(Errc::kCorrupt, "TransactionLogKey: " + r.error());
  return id;
}

Result<TxnLogValue> DecodeTxnLogValue(ByteView value) {
  Bytes copy(value.begin(), value.end());
  WireReader r(MutableByteView(copy), false);
  int16_t version = -1;
  r.i16(version);
  if (!r.ok()) return MakeError(Errc::kCorrupt, "TransactionLogValue: " + r.error());
  if (version != kTxnLogValueV0 && version != kTxnLogValueV1) {
    return MakeError(Errc::kUnsupported, fmt::format("TransactionLogValue version {}", version));
  }
  r.set_flexible(version >= kTxnLogValueV1);
  TxnLogValue v;
  std::optional<std::vector<WireTopic>> topics;
  SerdeFields(r, v, topics);
  if (version >= kTxnLogValueV1) ReadTaggedFields(r, v);
  if (!r.ok()) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("TransactionLogValue v{}: {}", version, r.error()));
  }
  const auto status = static_cast<int8_t>(v.status);
  if (status < 0 || status > kMaxStatusId) {
    return MakeError(Errc::kCorrupt, fmt::format("TransactionLogValue: status id {}", status));
  }
  // Null partitions outside Empty would fail Kafka's loader; an empty set is
  // the only sensible reading. For Empty Kafka ignores whatever is there.
  if (topics && v.status != TxnStatus::kEmpty) v.partitions = ToPartitionMap(*topics);
  return v;
}

Result<TxnLogRecord> DecodeTxnLogRecord(ByteView key, std::optional<ByteView> value) {
  TxnLogRecord record;
  STRATA_ASSIGN_OR_RETURN(record.transactional_id, DecodeTxnLogKey(key));
  if (value) {  // braces: the macro is several statements
    STRATA_ASSIGN_OR_RETURN(record.value, DecodeTxnLogValue(*value));
  }
  return record;
}

}  // namespace strata::coordinator
