#include "storage/segment.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>

namespace strata::storage {

namespace fs = std::filesystem;
using protocol::BatchHeader;

namespace {

fs::path SegmentFile(const fs::path& dir, Offset base, std::string_view kind,
                     std::string_view suffix) {
  fs::path p = dir / OffsetFileName(base.value(), kind);
  p += std::string(suffix);
  return p;
}

}  // namespace

Result<std::shared_ptr<Segment>> Segment::OpenFiles(const fs::path& dir, Offset base,
                                                    int64_t max_index_bytes, bool truncate,
                                                    std::string_view suffix, Env* env) {
  std::shared_ptr<Segment> seg(new Segment(dir, base));
  fs::path index_path = SegmentFile(dir, base, kIndexSuffix, suffix);
  fs::path time_path = SegmentFile(dir, base, kTimeIndexSuffix, suffix);
  std::error_code ec;
  seg->index_missing_ = !fs::exists(index_path, ec) || !fs::exists(time_path, ec);
  if (truncate) {
    STRATA_RETURN_IF_ERROR(RemoveFile(index_path));
    STRATA_RETURN_IF_ERROR(RemoveFile(time_path));
  }
  STRATA_ASSIGN_OR_RETURN(seg->log_,
                          File::Open(SegmentFile(dir, base, kLogSuffix, suffix), true, truncate));
  STRATA_ASSIGN_OR_RETURN(seg->oindex_,
                          OffsetIndex::Open(index_path, base.value(), max_index_bytes));
  STRATA_ASSIGN_OR_RETURN(seg->tindex_, TimeIndex::Open(time_path, base.value(), max_index_bytes));
  const fs::path txn_path = SegmentFile(dir, base, kTxnIndexSuffix, suffix);
  if (truncate) {
    STRATA_ASSIGN_OR_RETURN(seg->txn_index_, TxnIndex::Create(txn_path, base, env));
  } else {
    auto opened = TxnIndex::Open(txn_path, base, env);
    if (!opened.ok() && opened.error().code != Errc::kCorrupt) return opened.take_error();
    if (opened.ok()) {
      seg->txn_index_ = std::move(opened).value();
    } else {
      seg->txn_index_damaged_ = true;
      STRATA_ASSIGN_OR_RETURN(seg->txn_index_, TxnIndex::Create(txn_path, base, env));
    }
  }
  seg->next_offset_ = base;
  seg->max_ts_offset_ = base;
  return seg;
}

Result<std::shared_ptr<Segment>> Segment::Create(const fs::path& dir, Offset base,
                                                 int64_t max_index_bytes, std::string_view suffix,
                                                 Env* env) {
  STRATA_ASSIGN_OR_RETURN(auto seg,
                          OpenFiles(dir, base, max_index_bytes, /*truncate=*/true, suffix, env));
  seg->index_missing_ = false;
  return seg;
}

Result<std::shared_ptr<Segment>> Segment::Open(const fs::path& dir, Offset base,
                                               int64_t max_index_bytes, std::string_view suffix,
                                               Env* env) {
  return OpenFiles(dir, base, max_index_bytes, /*truncate=*/false, suffix, env);
}

Status Segment::Append(ByteView data, const std::vector<BatchHeader>& headers,
                       int32_t index_interval_bytes) {
  uint64_t start = size();
  Status written = log_->Append(data);
  if (!written.ok()) {
    // Leave no partial batch behind; the caller reports the error.
    (void)log_->Truncate(start);
    return written;
  }
  uint64_t pos = start;
  for (const BatchHeader& h : headers) {
    STRATA_RETURN_IF_ERROR(IndexBatch(h, static_cast<uint32_t>(pos), index_interval_bytes));
    pos += static_cast<uint64_t>(h.size_in_bytes());
  }
  return Status::Ok();
}

Status Segment::IndexBatch(const BatchHeader& h, uint32_t position, int32_t index_interval_bytes) {
  if (h.max_timestamp > max_ts_) {
    max_ts_ = h.max_timestamp;
    max_ts_offset_ = h.last_offset();
  }
  // Kafka: an entry for this batch once MORE than the interval was written
  // since the last entry, counting only the bytes before this batch.
  if (bytes_since_index_entry_ > index_interval_bytes) {
    size_t n = oindex_->entries();
    if (!oindex_->IsFull() && (n == 0 || Offset(oindex_->entry(n - 1).offset) < h.last_offset())) {
      STRATA_RETURN_IF_ERROR(oindex_->Append(h.last_offset().value(), position));
    }
    STRATA_RETURN_IF_ERROR(tindex_->MaybeAppend(max_ts_, max_ts_offset_.value()));
    bytes_since_index_entry_ = 0;
  }
  bytes_since_index_entry_ += h.size_in_bytes();
  next_offset_ = h.last_offset() + 1;
  return Status::Ok();
}

Result<std::optional<BatchHeader>> Segment::HeaderAt(uint64_t pos, uint64_t limit) const {
  if (pos >= limit) return std::optional<BatchHeader>();
  uint8_t buf[protocol::kBatchHeaderSize];
  size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof(buf), limit - pos));
  STRATA_ASSIGN_OR_RETURN(size_t got, log_->ReadAt(pos, MutableByteView(buf, want)));
  auto parsed = protocol::ParseBatchHeader(ByteView(buf, got));
  if (!parsed.ok()) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("bad batch header at {}: {}", pos, parsed.error().message));
  }
  const BatchHeader& h = *parsed;
  if (h.last_offset_delta < 0 || h.records_count < 0) {
    return MakeError(Errc::kCorrupt, fmt::format("bad batch counts at {}", pos));
  }
  if (static_cast<uint64_t>(h.size_in_bytes()) > limit - pos) {
    return MakeError(Errc::kCorrupt, fmt::format("batch at {} of {} bytes passes the end {}", pos,
                                                 h.size_in_bytes(), limit));
  }
  return std::optional<BatchHeader>(h);
}

Result<Bytes> Segment::ReadBatch(uint64_t pos, const BatchHeader& header) const {
  return log_->ReadExact(pos, static_cast<size_t>(header.size_in_bytes()));
}

Status Segment::ForEachBatch(uint64_t from, uint64_t limit,
                             const std::function<bool(const BatchHeader&, uint64_t)>& visit) const {
  uint64_t pos = from;
  while (pos < limit) {
    STRATA_ASSIGN_OR_RETURN(auto header, HeaderAt(pos, limit));
    if (!visit(*header, pos)) break;
    pos += static_cast<uint64_t>(header->size_in_bytes());
  }
  return Status::Ok();
}

Result<std::optional<std::pair<uint64_t, BatchHeader>>> Segment::FindBatch(Offset offset,
                                                                           uint64_t from,
                                                                           uint64_t limit) const {
  std::optional<std::pair<uint64_t, BatchHeader>> found;
  STRATA_RETURN_IF_ERROR(ForEachBatch(from, limit, [&](const BatchHeader& h, uint64_t pos) {
    if (h.last_offset() < offset) return true;
    found.emplace(pos, h);
    return false;
  }));
  return found;
}

Status Segment::CheckIndexes() const {
  if (index_missing_ && size() > 0) {
    return MakeError(Errc::kCorrupt, fmt::format("index files of segment {} missing", base_));
  }
  STRATA_RETURN_IF_ERROR(oindex_->SanityCheck(size()));
  return tindex_->SanityCheck();
}

Status Segment::LoadTail() {
  TimeIndex::Entry last_time = tindex_->LastEntry();
  max_ts_ = last_time.timestamp;
  max_ts_offset_ = Offset(last_time.offset);
  size_t n = oindex_->entries();
  uint64_t pos = n == 0 ? 0 : oindex_->entry(n - 1).position;
  Offset prev_last = base_ - 1;
  next_offset_ = base_;
  uint64_t end = size();
  while (pos < end) {
    STRATA_ASSIGN_OR_RETURN(auto header, HeaderAt(pos, end));
    const BatchHeader& h = *header;
    if (h.base_offset <= prev_last || h.last_offset() - base_ > INT32_MAX) {
      return MakeError(Errc::kCorrupt,
                       fmt::format("batch offset {} out of order at {}", h.base_offset, pos));
    }
    if (prev_last < base_ && n > 0 && h.last_offset() != Offset(oindex_->entry(n - 1).offset)) {
      return MakeError(Errc::kCorrupt, fmt::format("last index entry {} does not match batch {}",
                                                   oindex_->entry(n - 1).offset, h.last_offset()));
    }
    STRATA_ASSIGN_OR_RETURN(Bytes batch, ReadBatch(pos, h));
    if (!protocol::BatchCrcValid(batch)) {
      return MakeError(Errc::kCorrupt, fmt::format("CRC mismatch at {}", pos));
    }
    if (h.max_timestamp > max_ts_) {
      max_ts_ = h.max_timestamp;
      max_ts_offset_ = h.last_offset();
    }
    prev_last = h.last_offset();
    next_offset_ = prev_last + 1;
    pos += static_cast<uint64_t>(h.size_in_bytes());
  }
  if (tindex_->entries() > 0 && Offset(last_time.offset) >= next_offset_) {
    return MakeError(Errc::kCorrupt, "time index points past the last batch");
  }
  return Status::Ok();
}

Status Segment::ResetIndexes() {
  STRATA_RETURN_IF_ERROR(oindex_->Reset());
  STRATA_RETURN_IF_ERROR(tindex_->Reset());
  index_missing_ = false;
  next_offset_ = base_;
  max_ts_ = -1;
  max_ts_offset_ = base_;
  bytes_since_index_entry_ = 0;
  return Status::Ok();
}

Status Segment::TruncateLog(uint64_t new_size) { return log_->Truncate(new_size); }

Status Segment::OnBecomeInactive() {
  return tindex_->MaybeAppend(max_ts_, max_ts_offset_.value(), /*skip_full_check=*/true);
}

void Segment::set_max_index_bytes(int64_t bytes) {
  oindex_->set_max_index_bytes(bytes);
  tindex_->set_max_index_bytes(bytes);
}

Status Segment::Flush() {
  STRATA_RETURN_IF_ERROR(log_->Sync());
  STRATA_RETURN_IF_ERROR(oindex_->Flush());
  STRATA_RETURN_IF_ERROR(tindex_->Flush());
  return txn_index_->Flush();
}

Status Segment::DeleteFiles() {
  STRATA_RETURN_IF_ERROR(RemoveFile(log_->path()));
  STRATA_RETURN_IF_ERROR(RemoveFile(oindex_->path()));
  STRATA_RETURN_IF_ERROR(RemoveFile(tindex_->path()));
  return txn_index_->Delete();
}

Status RenameSegmentFiles(const fs::path& dir, Offset base, std::string_view from,
                          std::string_view to) {
  for (std::string_view kind : {kIndexSuffix, kTimeIndexSuffix, kTxnIndexSuffix, kLogSuffix}) {
    fs::path src = SegmentFile(dir, base, kind, from);
    fs::path dst = SegmentFile(dir, base, kind, to);
    if (::rename(src.c_str(), dst.c_str()) != 0) {
      // A missing index is rebuilt by recovery; a missing .log is an error.
      if (errno == ENOENT && kind != kLogSuffix) continue;
      return IoError("rename to " + dst.filename().string(), src);
    }
  }
  return Status::Ok();
}

Status RemoveSegmentFiles(const fs::path& dir, Offset base, std::string_view suffix,
                          bool keep_txn_index) {
  for (std::string_view kind : {kLogSuffix, kIndexSuffix, kTimeIndexSuffix, kTxnIndexSuffix}) {
    if (keep_txn_index && kind == kTxnIndexSuffix) continue;
    STRATA_RETURN_IF_ERROR(RemoveFile(SegmentFile(dir, base, kind, suffix)));
  }
  return Status::Ok();
}

}  // namespace strata::storage
