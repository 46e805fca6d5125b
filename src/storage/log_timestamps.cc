// LogImpl timestamp lookups (ListOffsets by time and ListOffsets -3), with
// record-level answers (compressed batches are decompressed), as Kafka gives.
#include <fmt/format.h>

#include "base/log.h"
#include "storage/log_impl.h"
#include "storage/record_scan.h"

namespace strata::storage {

using protocol::BatchHeader;

namespace {

// First record in `batch` with timestamp >= ts (== ts when `exact`) and
// offset >= min_offset.
Result<std::optional<TimestampOffset>> SearchBatch(const Segment& seg, uint64_t pos,
                                                   const BatchHeader& h, int64_t ts, bool exact,
                                                   Offset min_offset) {
  STRATA_ASSIGN_OR_RETURN(Bytes batch, seg.ReadBatch(pos, h));
  std::optional<TimestampOffset> found;
  Status st = ForEachRecordTimestamp(batch, h, [&](Offset offset, int64_t record_ts) {
    bool match = exact ? record_ts == ts : record_ts >= ts;
    if (!match || offset < min_offset) return true;
    found = TimestampOffset{record_ts, offset};
    return false;
  });
  if (!st.ok()) return st.take_error();
  return found;
}

}  // namespace

std::optional<TimestampOffset> LogImpl::OffsetForTimestamp(int64_t ts) const {
  std::lock_guard lock(mu_);
  const Offset start = log_start_.load();
  for (const auto& entry_pair : segments_) {
    // Named, not a structured binding: clang 14 cannot capture bindings in lambdas.
    const auto base = entry_pair.first;
    const auto& seg = entry_pair.second;
    if (seg->max_timestamp() < ts || seg->next_offset() <= start) continue;
    // The time index gives an offset whose batch and everything before it
    // hold only timestamps <= the entry's, so the scan can start there.
    TimeIndex::Entry entry = seg->time_index().Lookup(ts);
    uint64_t from = seg->IndexPosition(std::max(Offset(entry.offset), start));
    std::optional<TimestampOffset> found;
    Status st = seg->ForEachBatch(from, seg->size(), [&](const BatchHeader& h, uint64_t pos) {
      if (h.max_timestamp < ts || h.last_offset() < start) return true;
      auto hit = SearchBatch(*seg, pos, h, ts, /*exact=*/false, start);
      if (!hit.ok()) {
        log::Get("storage")->warn("{}: timestamp search at {}: {}", label_, pos,
                                  hit.error().message);
        return true;
      }
      found = *hit;
      return !found.has_value();
    });
    if (!st.ok()) {
      log::Get("storage")->warn("{}: timestamp search in segment {}: {}", label_, base,
                                st.error().message);
    }
    if (found) return found;
  }
  return std::nullopt;
}

TimestampOffset LogImpl::MaxTimestamp() const {
  std::lock_guard lock(mu_);
  const Segment* best = nullptr;
  for (const auto& [base, seg] : segments_) {
    if (seg->max_timestamp() >= 0 && (!best || seg->max_timestamp() > best->max_timestamp())) {
      best = seg.get();
    }
  }
  if (best == nullptr) return {};
  const int64_t ts = best->max_timestamp();
  TimestampOffset result{ts, best->offset_of_max_timestamp()};
  uint64_t from = best->IndexPosition(best->offset_of_max_timestamp());
  Status st = best->ForEachBatch(from, best->size(), [&](const BatchHeader& h, uint64_t pos) {
    if (h.max_timestamp != ts) return true;
    auto hit = SearchBatch(*best, pos, h, ts, /*exact=*/true, h.base_offset);
    if (hit.ok() && hit->has_value()) result = **hit;
    return false;
  });
  if (!st.ok()) {
    log::Get("storage")->warn("{}: max timestamp search: {}", label_, st.error().message);
  }
  return result;
}

}  // namespace strata::storage
