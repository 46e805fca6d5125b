#include "kafka/record_checks.h"

#include <fmt/format.h>

#include "protocol/records.h"

namespace strata::kafka {

namespace {

using protocol::ErrorCode;

// Bounds of the timestamps a CreateTime topic accepts now (saturated).
struct TimestampWindow {
  __int128 low = 0;
  __int128 high = 0;
  bool Contains(int64_t ts) const { return ts >= low && ts <= high; }
};

std::string Summary(const std::vector<protocol::ProduceResponse::RecordError>& errors) {
  std::string shown;
  for (size_t i = 0; i < errors.size() && i < 3; ++i) {
    if (i > 0) shown += ", ";
    shown += fmt::format("RecordError(batchIndex={}, message='{}')", errors[i].batch_index,
                         errors[i].message.value_or(""));
  }
  return fmt::format(
      "One or more records have been rejected due to {} record errors in total, and only "
      "showing the first three errors at most: [{}]",
      errors.size(), shown);
}

}  // namespace

Result<RecordRejection> CheckRecords(const protocol::BatchHeader& header, ByteView batch,
                                     const storage::LogConfig& config, const TopicPartition& tp,
                                     int64_t now_ms, size_t max_decompressed) {
  RecordRejection out;
  const bool create_time = !config.message_timestamp_log_append;
  const TimestampWindow window{__int128{now_ms} - config.message_timestamp_before_max_ms,
                               __int128{now_ms} + config.message_timestamp_after_max_ms};
  const bool check_timestamps = create_time && (!window.Contains(header.base_timestamp) ||
                                                !window.Contains(header.max_timestamp));
  if (!config.compacted && !check_timestamps) return out;
  bool timestamp_refused = false;
  int32_t index = 0;
  STRATA_RETURN_IF_ERROR(protocol::ForEachRecord(
      header, batch, max_decompressed, [&](const protocol::Record& r) -> Status {
        if (config.compacted && !r.key) {
          out.errors.push_back({index, fmt::format("Compacted topic cannot accept message "
                                                   "without key in topic partition {}.",
                                                   tp.ToString())});
        }
        const int64_t ts = header.base_timestamp + r.timestamp_delta;
        if (check_timestamps && ts != -1 && !window.Contains(ts)) {
          timestamp_refused = true;
          out.errors.push_back(
              {index, fmt::format("Timestamp {} of message with offset {} is out of range. The "
                                  "timestamp should be within [{}, {}]",
                                  ts, (header.base_offset + r.offset_delta).value(),
                                  int64_t(std::max<__int128>(window.low, INT64_MIN)),
                                  int64_t(std::min<__int128>(window.high, INT64_MAX)))});
        }
        ++index;
        return Status::Ok();
      }));
  if (out.errors.empty()) return out;
  out.code = timestamp_refused ? ErrorCode::kInvalidTimestamp : ErrorCode::kInvalidRecord;
  out.message = Summary(out.errors);
  return out;
}

}  // namespace strata::kafka
