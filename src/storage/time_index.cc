#include "storage/time_index.h"

#include <fmt/format.h>

#include <algorithm>

namespace strata::storage {

Result<std::unique_ptr<TimeIndex>> TimeIndex::Open(const std::filesystem::path& path,
                                                   int64_t base_offset, int64_t max_index_bytes) {
  STRATA_ASSIGN_OR_RETURN(auto file, File::Open(path, /*create=*/true));
  uint64_t whole = file->size() / kEntrySize * kEntrySize;
  STRATA_ASSIGN_OR_RETURN(Bytes data, file->ReadExact(0, whole));
  std::unique_ptr<TimeIndex> index(new TimeIndex(std::move(file), base_offset, max_index_bytes));
  index->entries_.reserve(whole / kEntrySize);
  for (size_t i = 0; i < whole; i += kEntrySize) {
    index->entries_.push_back(
        {static_cast<int64_t>(LoadBE64(&data[i])), static_cast<int32_t>(LoadBE32(&data[i + 8]))});
  }
  return index;
}

Status TimeIndex::SanityCheck() const {
  auto corrupt = [&](const std::string& why) {
    return MakeError(Errc::kCorrupt, fmt::format("time index {}: {}", path().string(), why));
  };
  if (file_->size() % kEntrySize != 0) {
    return corrupt(fmt::format("length {} is not a multiple of {}", file_->size(), kEntrySize));
  }
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Raw& e = entries_[i];
    if (e.relative < 0) return corrupt(fmt::format("entry {} has negative offset", i));
    if (i > 0 &&
        (e.timestamp <= entries_[i - 1].timestamp || e.relative < entries_[i - 1].relative)) {
      return corrupt(fmt::format("entry {} does not increase", i));
    }
  }
  return Status::Ok();
}

Status TimeIndex::MaybeAppend(int64_t timestamp, int64_t offset, bool skip_full_check) {
  if (!skip_full_check && IsFull()) return Status::Ok();
  Entry last = LastEntry();
  if (timestamp <= last.timestamp) return Status::Ok();
  if (!entries_.empty() && offset < last.offset) return Status::Ok();
  int64_t relative = offset - base_;
  STRATA_CHECK(relative >= 0 && relative <= INT32_MAX, "offset {} out of time index range", offset);
  uint8_t buf[kEntrySize];
  StoreBE64(buf, static_cast<uint64_t>(timestamp));
  StoreBE32(buf + 8, static_cast<uint32_t>(relative));
  STRATA_RETURN_IF_ERROR(file_->Append(ByteView(buf, kEntrySize)));
  entries_.push_back({timestamp, static_cast<int32_t>(relative)});
  return Status::Ok();
}

TimeIndex::Entry TimeIndex::Lookup(int64_t timestamp) const {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), timestamp,
                             [](int64_t t, const Raw& e) { return t < e.timestamp; });
  if (it == entries_.begin()) return {-1, base_};
  --it;
  return {it->timestamp, base_ + it->relative};
}

TimeIndex::Entry TimeIndex::LastEntry() const {
  if (entries_.empty()) return {-1, base_};
  return {entries_.back().timestamp, base_ + entries_.back().relative};
}

Status TimeIndex::Reset() {
  STRATA_RETURN_IF_ERROR(file_->Truncate(0));
  entries_.clear();
  return Status::Ok();
}

}  // namespace strata::storage
