#pragma once
// TimeIndex: a segment's sparse <base>.timeindex in Kafka's format: 12-byte
// entries (timestamp int64 BE, relative offset int32 BE). An entry (T, O)
// means "the largest timestamp in the segment up to and including the batch
// whose last offset is O is T"; timestamps strictly increase. Not
// preallocated (length = entries * 12). Mirrored in memory.
//
// Thread-safety: none; the owning Log's mutex serialises all calls.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "base/result.h"
#include "storage/file.h"

namespace strata::storage {

class TimeIndex {
 public:
  static constexpr int kEntrySize = 12;

  struct Entry {
    int64_t timestamp = -1;
    int64_t offset = 0;
  };

  static Result<std::unique_ptr<TimeIndex>> Open(const std::filesystem::path& path,
                                                 int64_t base_offset, int64_t max_index_bytes);

  // kCorrupt when the length is not a multiple of 12, an offset is below the
  // base, or timestamps/offsets go backwards.
  Status SanityCheck() const;

  // Kafka's maybeAppend: adds (timestamp, offset) only when timestamp is
  // above the last entry's (and offset not below it). Unless
  // `skip_full_check` (roll/close), nothing is added to a full index.
  Status MaybeAppend(int64_t timestamp, int64_t offset, bool skip_full_check = false);
  // The entry with the largest timestamp <= `timestamp`, or {-1, base}.
  Entry Lookup(int64_t timestamp) const;
  // The last entry, or {-1, base} when empty.
  Entry LastEntry() const;
  Status Reset();

  // Kafka keeps the last slot free for the entry appended at roll.
  bool IsFull() const { return static_cast<int64_t>(entries_.size()) >= max_entries_ - 1; }
  void set_max_index_bytes(int64_t bytes) { max_entries_ = bytes / kEntrySize; }
  size_t entries() const { return entries_.size(); }
  Entry entry(size_t i) const { return {entries_[i].timestamp, base_ + entries_[i].relative}; }
  Status Flush() { return file_->Sync(); }
  const std::filesystem::path& path() const { return file_->path(); }

 private:
  struct Raw {
    int64_t timestamp;
    int32_t relative;
  };
  TimeIndex(std::unique_ptr<File> file, int64_t base, int64_t max_bytes)
      : file_(std::move(file)), base_(base), max_entries_(max_bytes / kEntrySize) {}

  std::unique_ptr<File> file_;
  int64_t base_;
  int64_t max_entries_;
  std::vector<Raw> entries_;
};

}  // namespace strata::storage
