#include "storage/offset_index.h"

#include <fmt/format.h>

#include <algorithm>

namespace strata::storage {

Result<std::unique_ptr<OffsetIndex>> OffsetIndex::Open(const std::filesystem::path& path,
                                                       int64_t base_offset,
                                                       int64_t max_index_bytes) {
  STRATA_ASSIGN_OR_RETURN(auto file, File::Open(path, /*create=*/true));
  uint64_t whole = file->size() / kEntrySize * kEntrySize;
  STRATA_ASSIGN_OR_RETURN(Bytes data, file->ReadExact(0, whole));
  std::unique_ptr<OffsetIndex> index(
      new OffsetIndex(std::move(file), base_offset, max_index_bytes));
  index->entries_.reserve(whole / kEntrySize);
  for (size_t i = 0; i < whole; i += kEntrySize) {
    index->entries_.push_back({static_cast<int32_t>(LoadBE32(&data[i])), LoadBE32(&data[i + 4])});
  }
  return index;
}

Status OffsetIndex::SanityCheck(uint64_t log_size) const {
  auto corrupt = [&](const std::string& why) {
    return MakeError(Errc::kCorrupt, fmt::format("offset index {}: {}", path().string(), why));
  };
  if (file_->size() % kEntrySize != 0) {
    return corrupt(fmt::format("length {} is not a multiple of {}", file_->size(), kEntrySize));
  }
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Raw& e = entries_[i];
    if (e.relative < 0) return corrupt(fmt::format("entry {} has negative offset", i));
    if (e.position >= log_size) {
      return corrupt(
          fmt::format("entry {} points at {} past the log end {}", i, e.position, log_size));
    }
    if (i > 0 &&
        (e.relative <= entries_[i - 1].relative || e.position <= entries_[i - 1].position)) {
      return corrupt(fmt::format("entry {} does not increase", i));
    }
  }
  return Status::Ok();
}

Status OffsetIndex::Append(int64_t offset, uint32_t position) {
  int64_t relative = offset - base_;
  STRATA_CHECK(relative >= 0 && relative <= INT32_MAX, "offset {} out of index range (base {})",
               offset, base_);
  STRATA_CHECK(entries_.empty() || relative > entries_.back().relative,
               "offset index append {} not above last entry", offset);
  uint8_t buf[kEntrySize];
  StoreBE32(buf, static_cast<uint32_t>(relative));
  StoreBE32(buf + 4, position);
  STRATA_RETURN_IF_ERROR(file_->Append(ByteView(buf, kEntrySize)));
  entries_.push_back({static_cast<int32_t>(relative), position});
  return Status::Ok();
}

OffsetIndex::Entry OffsetIndex::Lookup(int64_t offset) const {
  int64_t relative = offset - base_;
  // First entry with relative > target; the one before it is the answer.
  auto it = std::upper_bound(entries_.begin(), entries_.end(), relative,
                             [](int64_t r, const Raw& e) { return r < e.relative; });
  if (it == entries_.begin()) return {base_, 0};
  --it;
  return {base_ + it->relative, it->position};
}

Status OffsetIndex::Reset() {
  STRATA_RETURN_IF_ERROR(file_->Truncate(0));
  entries_.clear();
  return Status::Ok();
}

}  // namespace strata::storage
