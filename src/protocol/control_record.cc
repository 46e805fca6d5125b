#include "protocol/control_record.h"

#include <string_view>

#include "protocol/batch_builder.h"
#include "protocol/records.h"

namespace strata::protocol {

namespace {

constexpr int16_t kControlKeyVersion = 0;
constexpr int16_t kMarkerValueVersion = 0;
constexpr size_t kControlKeySize = 4;      // version, type
constexpr size_t kMarkerValueSize = 6;     // version, coordinator epoch
constexpr size_t kMaxControlBatch = 4096;  // a marker is 78 bytes

}  // namespace

Bytes BuildTxnMarkerBatch(int64_t producer_id, int16_t producer_epoch, const TxnMarker& marker,
                          int64_t timestamp_ms) {
  Bytes key(kControlKeySize);
  StoreBE16(key.data(), static_cast<uint16_t>(kControlKeyVersion));
  StoreBE16(key.data() + 2, static_cast<uint16_t>(marker.type));
  Bytes value(kMarkerValueSize);
  StoreBE16(value.data(), static_cast<uint16_t>(kMarkerValueVersion));
  StoreBE32(value.data() + 2, static_cast<uint32_t>(marker.coordinator_epoch));
  BatchBuilder builder;
  builder.set_producer(producer_id, producer_epoch, -1).set_transactional(true).set_control(true);
  builder.Add({.key = std::move(key), .value = std::move(value), .timestamp = timestamp_ms});
  return builder.Build();
}

Result<std::optional<TxnMarker>> ParseTxnMarker(const BatchHeader& header, ByteView batch) {
  // Compaction empties a marker it keeps only for its producer's epoch.
  if (!header.control() || header.records_count == 0) return std::optional<TxnMarker>{};
  Bytes scratch;
  STRATA_ASSIGN_OR_RETURN(ByteView section,
                          RecordsSection(header, batch, kMaxControlBatch, scratch));
  RecordParser parser(section);
  Record record;
  STRATA_RETURN_IF_ERROR(parser.Next(record));
  if (!record.key || record.key->size() < kControlKeySize) {
    return MakeError(Errc::kCorrupt, "control record without a key");
  }
  if (static_cast<int16_t>(LoadBE16(record.key->data())) < 0) {
    return MakeError(Errc::kCorrupt, "control record key with a negative version");
  }
  const auto type = static_cast<int16_t>(LoadBE16(record.key->data() + 2));
  if (type != static_cast<int16_t>(ControlType::kAbort) &&
      type != static_cast<int16_t>(ControlType::kCommit)) {
    return std::optional<TxnMarker>{};  // another kind of control record
  }
  if (!record.value || record.value->size() < kMarkerValueSize) {
    return MakeError(Errc::kCorrupt, "end-transaction marker without its value");
  }
  TxnMarker marker;
  marker.type = static_cast<ControlType>(type);
  marker.coordinator_epoch = static_cast<int32_t>(LoadBE32(record.value->data() + 2));
  return std::optional<TxnMarker>{marker};
}

}  // namespace strata::protocol
