#include "storage/cleaner_pass.h"

#include <fmt/format.h>

#include <system_error>

#include "base/log.h"
#include "protocol/records.h"
#include "storage/cleaner_batch.h"

namespace strata::storage {

namespace fs = std::filesystem;
using protocol::BatchHeader;

namespace {

// Cleaned bytes are buffered up to this much before each segment append.
constexpr size_t kWriteChunkBytes = 1u << 20;
// Bound on a batch's decompressed records (as for produced batches).
constexpr size_t kMaxDecompressedBytes = 64u << 20;

Error Aborted(const std::string& label) {
  return MakeError(Errc::kShuttingDown, fmt::format("{}: cleaning aborted", label));
}

}  // namespace

Status SegmentBatchReader::Fill(size_t at_least) {
  size_t len = static_cast<size_t>(std::min<uint64_t>(limit_ - pos_, std::max(chunk_, at_least)));
  STRATA_ASSIGN_OR_RETURN(buf_, seg_.Read(pos_, len));
  buf_pos_ = pos_;
  return Status::Ok();
}

Result<bool> SegmentBatchReader::Next(BatchHeader* header, ByteView* batch) {
  if (pos_ >= limit_) return false;
  const size_t want_header =
      static_cast<size_t>(std::min<uint64_t>(protocol::kBatchHeaderSize, limit_ - pos_));
  if (pos_ < buf_pos_ || pos_ + want_header > buf_pos_ + buf_.size()) {
    STRATA_RETURN_IF_ERROR(Fill(want_header));
  }
  ByteView avail = ByteView(buf_).subspan(size_t(pos_ - buf_pos_));
  auto parsed = protocol::ParseBatchHeader(avail);
  if (!parsed.ok()) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("bad batch header at {}: {}", pos_, parsed.error().message));
  }
  const BatchHeader& h = *parsed;
  if (h.last_offset_delta < 0 || h.records_count < 0 ||
      static_cast<uint64_t>(h.size_in_bytes()) > limit_ - pos_) {
    return MakeError(Errc::kCorrupt, fmt::format("bad batch at {}", pos_));
  }
  const size_t size = static_cast<size_t>(h.size_in_bytes());
  if (pos_ + size > buf_pos_ + buf_.size()) {
    STRATA_RETURN_IF_ERROR(Fill(size));
  }
  *header = h;
  *batch = ByteView(buf_).subspan(size_t(pos_ - buf_pos_), size);
  batch_pos_ = pos_;
  pos_ += size;
  return true;
}

CleanPass::CleanPass(CleanPassInput input, CleanPassHooks hooks, OffsetMap& map)
    : in_(std::move(input)),
      hooks_(std::move(hooks)),
      map_(map),
      txns_(in_.aborted),
      end_(in_.first_dirty) {
  counters_.first_dirty_offset = in_.first_dirty;
}

Status CleanPass::BuildOffsetMap() {
  map_.Clear();
  std::vector<const Segment*> dirty;
  for (const auto& seg : in_.segments) {
    if (seg->base_offset() >= in_.first_uncleanable) break;
    if (seg->next_offset() > in_.first_dirty) dirty.push_back(seg.get());
  }
  for (size_t i = 0; i < dirty.size(); ++i) {
    const Segment& seg = *dirty[i];
    Offset next_start = i + 1 < dirty.size() ? dirty[i + 1]->base_offset() : in_.first_uncleanable;
    uint64_t from = seg.base_offset() <= in_.first_dirty ? in_.first_dirty_position : 0;
    STRATA_ASSIGN_OR_RETURN(bool full, MapSegment(seg, from, next_start));
    if (full) {
      map_full_ = true;
      break;
    }
  }
  end_ = std::max(in_.first_dirty, map_.latest_offset() + 1);
  counters_.end_offset = end_;
  counters_.map_full = map_full_;
  return Status::Ok();
}

// Maps the records at or after the first dirty offset; true when the map filled.
Result<bool> CleanPass::MapSegment(const Segment& seg, uint64_t from, Offset next_start) {
  SegmentBatchReader reader(seg, from, seg.size());
  BatchHeader h;
  ByteView batch;
  for (;;) {
    if (hooks_.aborted()) return Aborted(in_.label);
    STRATA_ASSIGN_OR_RETURN(bool more, reader.Next(&h, &batch));
    if (!more) break;
    counters_.map_bytes_read += int64_t(batch.size());
    if (h.last_offset() < in_.first_dirty) continue;
    // An aborted transaction's records are never a key's latest value:
    // mapped, they would let the cleaner drop the committed value they
    // overwrote, which read_committed readers still read.
    if (!h.control() && !InAbortedTxn(h)) {
      STRATA_ASSIGN_OR_RETURN(bool full, MapBatch(h, batch));
      if (full) return true;
    }
    map_.UpdateLatestOffset(h.last_offset());
  }
  // Offsets may have gaps (an earlier clean): the segment covers all of them.
  map_.UpdateLatestOffset(next_start - 1);
  return false;
}

bool CleanPass::InAbortedTxn(const BatchHeader& h) const {
  if (!h.transactional()) return false;
  for (const AbortedTxn& txn : in_.aborted) {
    if (txn.producer_id == h.producer_id && txn.first_offset <= h.base_offset &&
        h.base_offset <= txn.last_offset) {
      return true;
    }
  }
  return false;
}

Result<bool> CleanPass::MapBatch(const BatchHeader& h, ByteView batch) {
  Bytes scratch;
  STRATA_ASSIGN_OR_RETURN(ByteView section,
                          protocol::RecordsSection(h, batch, kMaxDecompressedBytes, scratch));
  protocol::RecordParser parser(section);
  protocol::Record record;
  for (int32_t i = 0; i < h.records_count; ++i) {
    STRATA_RETURN_IF_ERROR(parser.Next(record));
    const Offset offset = h.base_offset + record.offset_delta;
    if (!record.key || offset < in_.first_dirty) continue;
    if (!map_.Put(*record.key, offset)) return true;
  }
  STRATA_RETURN_IF_ERROR(protocol::CheckRecordsEnd(h, parser));
  return false;
}

std::vector<SegmentGroup> CleanPass::GroupSegments() const {
  const int64_t max_log = std::min<int64_t>(in_.config.segment_bytes, INT32_MAX);
  const int64_t max_index = in_.config.segment_index_bytes;
  std::vector<SegmentGroup> groups;
  size_t i = 0;
  const auto& segs = in_.segments;
  while (i < segs.size() && segs[i]->base_offset() < end_) {
    // An empty segment has nothing to clean and would break the swap's
    // "covers every base below its end" rule: leave it alone.
    if (segs[i]->size() == 0) {
      ++i;
      continue;
    }
    SegmentGroup group{segs[i]};
    int64_t log_bytes = int64_t(segs[i]->size());
    int64_t oindex = segs[i]->offset_index_bytes();
    int64_t tindex = segs[i]->time_index_bytes();
    const Offset base = segs[i]->base_offset();
    for (++i; i < segs.size() && segs[i]->base_offset() < end_; ++i) {
      const Segment& next = *segs[i];
      if (next.size() == 0 || log_bytes + int64_t(next.size()) > max_log ||
          oindex + next.offset_index_bytes() > max_index ||
          tindex + next.time_index_bytes() > max_index ||
          next.next_offset() - 1 - base > INT32_MAX) {
        break;
      }
      group.push_back(segs[i]);
      log_bytes += int64_t(next.size());
      oindex += next.offset_index_bytes();
      tindex += next.time_index_bytes();
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

bool CleanPass::Retain(const BatchHeader& h, Offset offset, const protocol::Record& r,
                       bool aborted_txn) const {
  // Beyond what this pass mapped. Below the first dirty offset every key is
  // at its latest already, so a pass with nothing dirty (run for expired
  // tombstones) still applies the tombstone rule there.
  if (offset > std::max(map_.latest_offset(), in_.first_dirty - 1)) return true;
  if (aborted_txn) return false;                // its marker and .txnindex entry stay
  if (!r.key) return false;                     // keyless records cannot be compacted
  if (offset < map_.Get(*r.key)) return false;  // a later record has this key
  if (r.value) return true;
  // A tombstone stays until its batch's delete horizon has passed.
  std::optional<int64_t> horizon = DeleteHorizon(h);
  return !horizon || in_.now < *horizon;
}

Result<CleanedGroup> CleanPass::CleanGroup(const SegmentGroup& group) {
  const Offset base = group.front()->base_offset();
  STRATA_ASSIGN_OR_RETURN(
      auto dest, Segment::Create(in_.dir, base, in_.config.segment_index_bytes, kCleanedSuffix));
  Status st;
  for (size_t i = 0; i < group.size() && st.ok(); ++i) {
    st = CleanSegmentInto(*group[i], i + 1 == group.size(), *dest);
  }
  if (st.ok()) st = dest->OnBecomeInactive();
  if (st.ok()) st = dest->Flush();
  if (st.ok()) {
    // Keep the replaced data's age for retention by mtime (as Kafka does).
    std::error_code ec;
    auto mtime = fs::last_write_time(group.back()->log_path(), ec);
    if (!ec) fs::last_write_time(dest->log_path(), mtime, ec);
  }
  if (!st.ok()) {
    dest.reset();
    (void)RemoveSegmentFiles(in_.dir, base, kCleanedSuffix);
    return st.take_error();
  }
  counters_.bytes_written += int64_t(dest->size());
  return CleanedGroup{base, txns_.TakeIndexEntries()};
}

Result<FilteredBatch> CleanPass::FilterOne(const BatchHeader& h, ByteView batch,
                                           BatchFilterOptions options) {
  if (h.control()) {
    std::optional<protocol::TxnMarker> marker;
    if (h.records_count > 0) {
      STRATA_ASSIGN_OR_RETURN(marker, protocol::ParseTxnMarker(h, batch));
    }
    const bool discardable = txns_.OnControlBatch(h, marker, h.records_count == 0);
    return FilterControlBatch(batch, h, options, in_.now, discardable);
  }
  const bool aborted_txn = txns_.OnDataBatch(h);
  return FilterBatch(batch, h, options, [&](Offset offset, const protocol::Record& r) {
    return Retain(h, offset, r, aborted_txn);
  });
}

Status CleanPass::CleanSegmentInto(const Segment& seg, bool last_in_group, Segment& dest) {
  const uint64_t limit = seg.size();
  SegmentBatchReader reader(seg, 0, limit);
  BatchFilterOptions options;
  options.new_delete_horizon = in_.now + in_.config.delete_retention_ms;
  options.max_decompressed_bytes = kMaxDecompressedBytes;
  Bytes pending;
  std::vector<BatchHeader> headers;
  auto flush = [&]() -> Status {
    if (pending.empty()) return Status::Ok();
    if (dest.size() + pending.size() > uint64_t(INT32_MAX)) {
      return MakeError(Errc::kTooLarge, fmt::format("{}: cleaned segment {} passes 2 GiB",
                                                    in_.label, dest.base_offset()));
    }
    STRATA_RETURN_IF_ERROR(dest.Append(pending, headers, in_.config.index_interval_bytes));
    pending.clear();
    headers.clear();
    return Status::Ok();
  };
  BatchHeader h;
  ByteView batch;
  for (;;) {
    if (hooks_.aborted()) return Aborted(in_.label);
    STRATA_ASSIGN_OR_RETURN(bool more, reader.Next(&h, &batch));
    if (!more) break;
    if (!protocol::BatchCrcValid(batch)) {
      return MakeError(Errc::kCorrupt,
                       fmt::format("{}: CRC mismatch in segment {} at {}", in_.label,
                                   seg.base_offset(), reader.batch_position()));
    }
    counters_.bytes_read += int64_t(batch.size());
    options.retain_empty = (last_in_group && reader.position() == limit) ||
                           (h.idempotent() && hooks_.is_last_of_producer(h));
    STRATA_ASSIGN_OR_RETURN(FilteredBatch out, FilterOne(h, batch, options));
    counters_.records_read += out.records_read;
    counters_.records_retained += out.records_retained;
    // Only future horizons: one this pass could not act on must not make
    // the log look cleanable again at once (the cleaner would spin).
    if (out.delete_horizon > in_.now && (counters_.earliest_delete_horizon < 0 ||
                                         out.delete_horizon < counters_.earliest_delete_horizon)) {
      counters_.earliest_delete_horizon = out.delete_horizon;
    }
    if (out.outcome == BatchOutcome::kDropped) continue;
    ByteView kept = out.outcome == BatchOutcome::kOriginal ? batch : ByteView(out.bytes);
    STRATA_ASSIGN_OR_RETURN(BatchHeader kept_header, protocol::ParseBatchHeader(kept));
    pending.insert(pending.end(), kept.begin(), kept.end());
    headers.push_back(kept_header);
    if (pending.size() >= kWriteChunkBytes) STRATA_RETURN_IF_ERROR(flush());
  }
  return flush();
}

}  // namespace strata::storage
