#pragma once
// Segment: one <base>.log file with its .index, .timeindex and (once a
// transaction aborted in it) .txnindex, holding whole record batches with
// offsets >= base. Appends go to the end; indexing follows
// Kafka's LogSegment: an offset-index entry (batch last offset -> batch
// position) and a time-index entry (max timestamp so far -> its batch's last
// offset) once more than index.interval.bytes were appended since the last
// entry. Indexing is per batch (as Kafka's recovery does), so every index
// entry names the batch that starts at its position, as kafka-dump-log checks.
//
// Thread-safety: mutation and index lookups are serialised by the owning
// Log's mutex. HeaderAt/ReadBatch/Read/ForEachBatch only pread the .log and
// may run without the lock for bytes below a size() observed under it (such
// bytes never change). Deleting the files leaves the fds open, so readers
// holding a shared_ptr finish safely.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "base/env.h"
#include "base/file_region.h"
#include "base/offset.h"
#include "base/result.h"
#include "protocol/record_batch.h"
#include "storage/file.h"
#include "storage/offset_index.h"
#include "storage/time_index.h"
#include "storage/txn_index.h"

namespace strata::storage {

inline constexpr std::string_view kLogSuffix = ".log";
inline constexpr std::string_view kIndexSuffix = ".index";
inline constexpr std::string_view kTimeIndexSuffix = ".timeindex";
// Extra suffixes of a compaction swap (Kafka's): a cleaned segment is written
// as <base>.log.cleaned (+ indexes), renamed to .swap once complete, the
// segments it replaces are renamed to .deleted, then .swap loses its suffix.
inline constexpr std::string_view kCleanedSuffix = ".cleaned";
inline constexpr std::string_view kSwapSuffix = ".swap";
inline constexpr std::string_view kDeletedSuffix = ".deleted";

class Segment {
 public:
  // Creates empty files for a new segment (existing ones are emptied).
  // `suffix` is appended to the three file names (kCleanedSuffix while
  // compacting); the object keeps those names, so a segment written under a
  // suffix is reopened after its files are renamed.
  // The .txnindex is written through `env`.
  static Result<std::shared_ptr<Segment>> Create(const std::filesystem::path& dir, Offset base,
                                                 int64_t max_index_bytes,
                                                 std::string_view suffix = {},
                                                 Env* env = Env::Default());
  // Opens an existing segment; missing index files are created empty. A
  // damaged .txnindex is emptied and reported by txn_index_damaged(): the
  // log rebuilds it from the records.
  static Result<std::shared_ptr<Segment>> Open(const std::filesystem::path& dir, Offset base,
                                               int64_t max_index_bytes,
                                               std::string_view suffix = {},
                                               Env* env = Env::Default());

  Offset base_offset() const { return base_; }
  uint64_t size() const { return log_->size(); }
  // One past the last offset stored; base when empty.
  Offset next_offset() const { return next_offset_; }
  // Largest batch max timestamp (-1 if none) and the last offset of its batch.
  int64_t max_timestamp() const { return max_ts_; }
  Offset offset_of_max_timestamp() const { return max_ts_offset_; }
  // Wall-clock ms of the first append (segment.ms rolling); -1 when empty.
  int64_t first_append_ms() const { return first_append_ms_; }
  void set_first_append_ms(int64_t ms) { first_append_ms_ = ms; }
  // Kafka's largestTimestamp: the max timestamp, or the .log mtime without one.
  Result<int64_t> LargestTimestamp() const {
    if (max_ts_ >= 0) return max_ts_;
    return log_->ModifiedMs();
  }

  // Appends stamped batches laid out back to back in `data`, described in
  // order by `headers`, then indexes each one.
  Status Append(ByteView data, const std::vector<protocol::BatchHeader>& headers,
                int32_t index_interval_bytes);
  // Index bookkeeping for a batch already in the file at `position`.
  Status IndexBatch(const protocol::BatchHeader& header, uint32_t position,
                    int32_t index_interval_bytes);

  // The offset-index position to start scanning for `offset` (caller holds the lock).
  uint32_t IndexPosition(Offset offset) const { return oindex_->Lookup(offset.value()).position; }
  const OffsetIndex& offset_index() const { return *oindex_; }
  const TimeIndex& time_index() const { return *tindex_; }
  // The aborted transactions whose markers are in this segment.
  TxnIndex& txn_index() { return *txn_index_; }
  const TxnIndex& txn_index() const { return *txn_index_; }
  bool txn_index_damaged() const { return txn_index_damaged_; }
  void MarkTxnIndexRebuilt() { txn_index_damaged_ = false; }

  // Header of the batch at `pos`; nullopt when pos == limit. kCorrupt when
  // the header is invalid or the batch would extend past `limit`.
  Result<std::optional<protocol::BatchHeader>> HeaderAt(uint64_t pos, uint64_t limit) const;
  // The whole batch at `pos` whose header is `header`.
  Result<Bytes> ReadBatch(uint64_t pos, const protocol::BatchHeader& header) const;
  Result<Bytes> Read(uint64_t pos, size_t len) const { return log_->ReadExact(pos, len); }
  // The .log bytes [pos, pos + len) as a region; `self` (this segment) keeps
  // the fd open while the region is alive.
  static FileRegion Region(const std::shared_ptr<const Segment>& self, uint64_t pos, uint64_t len) {
    return FileRegion{self->log_->fd(), pos, len, self};
  }
  // Calls visit(header, position) for each batch in [from, limit) until it
  // returns false.
  Status ForEachBatch(
      uint64_t from, uint64_t limit,
      const std::function<bool(const protocol::BatchHeader&, uint64_t)>& visit) const;
  // Position and header of the first batch with last offset >= `offset`,
  // scanning [from, limit); nullopt if there is none.
  Result<std::optional<std::pair<uint64_t, protocol::BatchHeader>>> FindBatch(Offset offset,
                                                                              uint64_t from,
                                                                              uint64_t limit) const;

  // Index sanity (kCorrupt when either index is bad, or missing for a non-empty log).
  Status CheckIndexes() const;
  // Loads next_offset and max timestamp from the indexes plus a CRC-checked
  // scan from the last offset-index entry to EOF. kCorrupt when that tail is
  // not a clean run of batches ending exactly at EOF.
  Status LoadTail();

  // Recovery support: empty both indexes and the in-memory state.
  Status ResetIndexes();
  Status TruncateLog(uint64_t size);
  // Appends the final time-index entry (Kafka does this on roll and close).
  Status OnBecomeInactive();
  void set_max_index_bytes(int64_t bytes);
  bool IndexFull() const { return oindex_->IsFull() || tindex_->IsFull(); }

  Status Flush();
  // Unlinks the files (open fds stay valid for in-flight reads).
  Status DeleteFiles();
  // Sizes of the index files (entries * entry size), for grouping when cleaning.
  int64_t offset_index_bytes() const {
    return int64_t(oindex_->entries()) * OffsetIndex::kEntrySize;
  }
  int64_t time_index_bytes() const { return int64_t(tindex_->entries()) * TimeIndex::kEntrySize; }
  const std::filesystem::path& log_path() const { return log_->path(); }

 private:
  Segment(std::filesystem::path dir, Offset base) : dir_(std::move(dir)), base_(base) {}
  static Result<std::shared_ptr<Segment>> OpenFiles(const std::filesystem::path& dir, Offset base,
                                                    int64_t max_index_bytes, bool truncate,
                                                    std::string_view suffix, Env* env);

  std::filesystem::path dir_;
  Offset base_;
  std::unique_ptr<File> log_;
  std::unique_ptr<OffsetIndex> oindex_;
  std::unique_ptr<TimeIndex> tindex_;
  std::unique_ptr<TxnIndex> txn_index_;
  bool index_missing_ = false;
  bool txn_index_damaged_ = false;
  Offset next_offset_;
  int64_t max_ts_ = -1;
  Offset max_ts_offset_;
  int64_t bytes_since_index_entry_ = 0;
  int64_t first_append_ms_ = -1;
};

// Path-level helpers for the compaction swap; they do not touch open Segment
// objects (whose fds stay valid). `from`/`to` are "" for the live names.
// Renames the index files first and the .log last: a <base>.log<suffix>
// exists only once its indexes carry the same suffix.
Status RenameSegmentFiles(const std::filesystem::path& dir, Offset base, std::string_view from,
                          std::string_view to);
// Unlinks <base>.log<suffix> and its index files where present (but the
// .txnindex when `keep_txn_index`).
Status RemoveSegmentFiles(const std::filesystem::path& dir, Offset base, std::string_view suffix,
                          bool keep_txn_index = false);

}  // namespace strata::storage
