#pragma once
// TxnIndex: a segment's <base>.txnindex in Kafka's format (TransactionIndex,
// AbortedTxn): one 34-byte big-endian entry per aborted transaction whose
// ABORT marker was appended to this segment, in strictly increasing
// last_offset:
//   version int16 (0) | producerId int64 | firstOffset int64 |
//   lastOffset int64 (the marker) | lastStableOffset int64
// A read_committed fetch collects from these entries the aborted
// transactions overlapping what it returns (Kafka's collectAbortedTxns), so
// they are mirrored in memory and the fetch path never reads the file. As in
// Kafka the file is created by the first Append: a segment without aborts
// has none, and an absent or empty file is an empty index. The index is
// derived data: recovery truncates or rebuilds it from the log and the
// producer state. Every file access goes through Env, so tests can fail the
// disk; the file and the in-memory entries agree after every call, failed
// ones included.
//
// Thread-safety: none; the owning Log's mutex serialises every call,
// Collect and entries() included (they read what Append changes).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/env.h"
#include "base/offset.h"
#include "base/result.h"

namespace strata::storage {

inline constexpr std::string_view kTxnIndexSuffix = ".txnindex";

// One aborted transaction (Kafka's AbortedTxn). first_offset may lie in an
// earlier segment; last_offset is the ABORT marker's offset;
// last_stable_offset is the partition's LSO right after the marker.
struct AbortedTxn {
  int64_t producer_id = -1;
  Offset first_offset;
  Offset last_offset;
  Offset last_stable_offset;

  bool operator==(const AbortedTxn&) const = default;
};

// What a search of one index found (Kafka's TxnIndexSearchResult). When
// `complete`, an entry's last_stable_offset reached the upper bound, so no
// later segment can hold a transaction overlapping the range.
struct AbortedTxnSearch {
  std::vector<AbortedTxn> aborted;
  bool complete = false;
};

inline constexpr size_t kAbortedTxnSize = 34;
inline constexpr int16_t kAbortedTxnVersion = 0;

// The file image of `txns`, kAbortedTxnSize bytes each.
Bytes EncodeAbortedTxns(std::span<const AbortedTxn> txns);
// Parses and sanity-checks a whole index image (also for downloaded remote
// indexes). kCorrupt when the length is not a multiple of 34, a version is
// not 0, a last_offset is below `segment_base` or below its first_offset, or
// last offsets do not strictly increase.
Result<std::vector<AbortedTxn>> DecodeAbortedTxns(ByteView data, Offset segment_base);
// Kafka's collectAbortedTxns over `entries` in file order: those with
// last_offset >= fetch_offset and first_offset < upper_bound, up to and
// including the first entry whose last_stable_offset >= upper_bound, which
// ends the search as complete.
AbortedTxnSearch CollectAbortedTxns(std::span<const AbortedTxn> entries, Offset fetch_offset,
                                    Offset upper_bound);

class TxnIndex {
 public:
  // Loads `path` when present (absent = empty; no file is created). kCorrupt
  // when DecodeAbortedTxns rejects it: the caller rebuilds it with Create.
  static Result<std::unique_ptr<TxnIndex>> Open(const std::filesystem::path& path,
                                                Offset segment_base, Env* env = Env::Default());
  // An empty index; removes an existing file at `path` (new or rebuilt segment).
  static Result<std::unique_ptr<TxnIndex>> Create(const std::filesystem::path& path,
                                                  Offset segment_base, Env* env = Env::Default());

  // Appends an entry, creating the file on the first one. kInvalidArgument
  // (nothing written) when its last_offset is not above the last entry's, is
  // below the segment base or below its first_offset, or after Delete().
  // Durable after the next Flush().
  Status Append(const AbortedTxn& txn);
  // Drops every entry with last_offset >= `offset` (Kafka's truncateTo).
  Status TruncateTo(Offset offset);
  // Drops every entry (Kafka's reset, before a segment is recovered).
  Status Reset();

  // CollectAbortedTxns over this segment's entries.
  AbortedTxnSearch Collect(Offset fetch_offset, Offset upper_bound) const {
    return CollectAbortedTxns(entries_, fetch_offset, upper_bound);
  }
  const std::vector<AbortedTxn>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  std::optional<Offset> last_offset() const;
  // Bytes of whole entries (the file's size once writes succeed).
  uint64_t size_bytes() const { return entries_.size() * kAbortedTxnSize; }
  // Whether the file exists (it may exist and be empty after a truncation).
  bool file_exists() const { return file_exists_; }
  Offset base_offset() const { return base_; }
  const std::filesystem::path& path() const { return path_; }

  // fdatasyncs what Append/TruncateTo changed and, after the file was
  // created, fsyncs its directory. A no-op when nothing changed.
  Status Flush();
  // Releases the file handle; the next Append reopens it. Does not sync.
  void Close() { writer_.reset(); }
  // Unlinks the file. The entries stay readable (for readers that still
  // hold the segment); Append is refused afterwards.
  Status Delete();
  // Renames the file, when it exists, and keeps using the new name (the
  // compaction swap's .cleaned/.swap/.deleted suffixes). The caller syncs
  // the directory, as for the segment's other files.
  Status RenameTo(const std::filesystem::path& new_path);

 private:
  TxnIndex(std::filesystem::path path, Offset base, Env* env)
      : path_(std::move(path)), base_(base), env_(env) {}

  Status CheckAppendable(const AbortedTxn& txn) const;
  Status OpenWriter();
  // Cuts the file back to size_bytes() after a failed (maybe torn) append.
  Status RepairTail();
  Status TruncateEntries(size_t keep);

  std::filesystem::path path_;
  Offset base_;
  Env* env_;  // not owned; outlives the index
  std::vector<AbortedTxn> entries_;
  std::unique_ptr<WritableFile> writer_;  // opened lazily by Append/Flush
  bool file_exists_ = false;
  bool deleted_ = false;
  bool tail_dirty_ = false;      // the file may hold bytes past size_bytes()
  bool needs_sync_ = false;      // file contents changed since the last Flush
  bool needs_dir_sync_ = false;  // the file was created since the last Flush
};

}  // namespace strata::storage
