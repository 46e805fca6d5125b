#pragma once
// OffsetIndex: a segment's sparse <base>.index in Kafka's format: 8-byte
// entries (relative offset int32 BE, file position int32 BE). An entry
// (offset, position) means the batch whose LAST offset is `offset` starts at
// `position` in the .log (what kafka-dump-log verifies). Unlike Kafka the file
// is never preallocated: its length is exactly entries * 8, which Kafka's
// reader accepts. Entries are mirrored in memory for lookups.
//
// Thread-safety: none; the owning Log's mutex serialises all calls.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "base/result.h"
#include "storage/file.h"

namespace strata::storage {

class OffsetIndex {
 public:
  static constexpr int kEntrySize = 8;

  struct Entry {
    int64_t offset = 0;
    uint32_t position = 0;
  };

  // Opens (creating when missing) and loads every whole entry in the file.
  static Result<std::unique_ptr<OffsetIndex>> Open(const std::filesystem::path& path,
                                                   int64_t base_offset, int64_t max_index_bytes);

  // kCorrupt when the file length is not a multiple of 8, entries do not
  // strictly increase, or a position is at or past `log_size`.
  Status SanityCheck(uint64_t log_size) const;

  // Adds an entry; `offset` must exceed the last entry's.
  Status Append(int64_t offset, uint32_t position);
  // The entry with the largest offset <= `offset`, or {base, 0}.
  Entry Lookup(int64_t offset) const;
  // Drops every entry (before a rebuild).
  Status Reset();

  bool IsFull() const { return static_cast<int64_t>(entries_.size()) >= max_entries_; }
  void set_max_index_bytes(int64_t bytes) { max_entries_ = bytes / kEntrySize; }
  size_t entries() const { return entries_.size(); }
  Entry entry(size_t i) const { return {base_ + entries_[i].relative, entries_[i].position}; }
  Status Flush() { return file_->Sync(); }
  const std::filesystem::path& path() const { return file_->path(); }

 private:
  struct Raw {
    int32_t relative;
    uint32_t position;
  };
  OffsetIndex(std::unique_ptr<File> file, int64_t base, int64_t max_bytes)
      : file_(std::move(file)), base_(base), max_entries_(max_bytes / kEntrySize) {}

  std::unique_ptr<File> file_;
  int64_t base_;
  int64_t max_entries_;
  std::vector<Raw> entries_;
};

}  // namespace strata::storage
