#include "storage/recovery.h"

#include <fmt/format.h>

#include "base/log.h"

namespace strata::storage {

using protocol::BatchHeader;

namespace {

// Why the batch at `pos` is unusable, or "" when it is fine. I/O failures
// come back as errors so that a failing disk is not mistaken for corruption.
Result<std::string> CheckBatch(const Segment& seg, uint64_t pos, uint64_t end, Offset prev_last,
                               BatchHeader* out) {
  auto header = seg.HeaderAt(pos, end);
  if (!header.ok()) {
    if (header.error().code == Errc::kIoError) return header.take_error();
    return header.error().message;
  }
  const BatchHeader& h = **header;
  if (h.base_offset <= prev_last) {
    return fmt::format("batch base offset {} not above previous {}", h.base_offset, prev_last);
  }
  if (h.last_offset() - seg.base_offset() > INT32_MAX) {
    return fmt::format("batch last offset {} overflows the segment index", h.last_offset());
  }
  auto bytes = seg.ReadBatch(pos, h);
  if (!bytes.ok()) {
    if (bytes.error().code == Errc::kIoError) return bytes.take_error();
    return bytes.error().message;
  }
  if (!protocol::BatchCrcValid(*bytes)) return std::string("CRC mismatch");
  *out = h;
  return std::string();
}

}  // namespace

Result<SegmentRecovery> RecoverSegment(Segment& seg, Offset min_offset,
                                       int32_t index_interval_bytes, const std::string& dir_label,
                                       const std::function<void(const BatchHeader&)>& on_batch) {
  STRATA_RETURN_IF_ERROR(seg.ResetIndexes());
  const uint64_t end = seg.size();
  uint64_t pos = 0;
  Offset prev_last = std::max(min_offset, seg.base_offset()) - 1;
  std::string problem;
  while (pos < end) {
    BatchHeader h;
    STRATA_ASSIGN_OR_RETURN(problem, CheckBatch(seg, pos, end, prev_last, &h));
    if (!problem.empty()) break;
    STRATA_RETURN_IF_ERROR(seg.IndexBatch(h, static_cast<uint32_t>(pos), index_interval_bytes));
    if (on_batch) on_batch(h);
    prev_last = h.last_offset();
    pos += static_cast<uint64_t>(h.size_in_bytes());
  }
  SegmentRecovery result;
  result.valid_bytes = pos;
  result.truncated_bytes = end - pos;
  result.next_offset = seg.next_offset();
  if (pos < end) {
    log::Get("storage")->warn(
        "{}: truncating segment {} at offset {} byte position {} ({} bytes dropped): {}", dir_label,
        seg.base_offset(), prev_last + 1, pos, end - pos, problem);
    STRATA_RETURN_IF_ERROR(seg.TruncateLog(pos));
  }
  // As Kafka's recover(): the segment's max timestamp goes into the time index.
  STRATA_RETURN_IF_ERROR(seg.OnBecomeInactive());
  return result;
}

}  // namespace strata::storage
