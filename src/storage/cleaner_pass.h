#pragma once
// CleanPass: the record work of one compaction pass over a snapshot of a
// log's non-active segments (Kafka's Cleaner.doClean minus the swap, which
// the log does under its mutex):
//   1. BuildOffsetMap: key -> latest offset over the dirty section
//      [first dirty, first uncleanable), stopping early when the map fills;
//      the pass then covers offsets below End().
//   2. GroupSegments: consecutive segments below End() grouped so that each
//      group fits one segment (segment.bytes, segment.index.bytes, 32-bit
//      relative offsets), as Kafka's groupSegmentsBySize.
//   3. CleanGroup: rewrites a group into <base>.log.cleaned (+ indexes),
//      keeping a record when it is past the map's latest offset, or it is
//      the latest for its key and is not a tombstone whose delete horizon
//      has passed. Keyless records in the mapped range are dropped, and so
//      are the records of aborted transactions (no reader at any isolation
//      level needs them once compacted, as Kafka's cleaner). A transaction
//      marker goes delete.retention.ms after no batch of its transaction is
//      left (CleanedTxns). An empty batch is kept for a producer's last batch
//      (its sequence and epoch) and for the group's last batch, so the cleaned
//      segment ends exactly where the group did (swap recovery relies on it).
//
// Segments are read without the log's mutex: bytes of non-active segments
// never change, and the shared_ptrs keep their fds open if retention deletes
// them meanwhile (the swap then notices and discards the group).
//
// Thread-safety: one pass runs on one thread.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "protocol/records.h"
#include "storage/cleaner_batch.h"
#include "storage/cleaner_offset_map.h"
#include "storage/cleaner_txn.h"
#include "storage/log.h"
#include "storage/segment.h"

namespace strata::storage {

// What the log hands a pass (captured under its mutex).
struct CleanPassInput {
  std::filesystem::path dir;
  std::string label;  // for log lines
  LogConfig config;
  int64_t now = 0;           // ms; tombstone horizons are judged against it
  Offset first_dirty;        // dirty section start (cleaner checkpoint)
  Offset first_uncleanable;  // dirty section end (a segment base)
  // Index position to start mapping at in the segment holding first_dirty.
  uint64_t first_dirty_position = 0;
  // Every non-active segment, ascending.
  std::vector<std::shared_ptr<Segment>> segments;
  // The aborted transactions of those segments (their .txnindex entries):
  // an aborted write never shadows the committed value of its key.
  std::vector<AbortedTxn> aborted;
};

struct CleanPassHooks {
  // True when batch `h` (of a producer) holds its producer's state: its last
  // data batch (sequence), or the marker of its current epoch when a marker
  // came after its last data (Kafka's isBatchLastRecordOfProducer). Such a
  // batch stays, empty if need be.
  std::function<bool(const protocol::BatchHeader& h)> is_last_of_producer;
  // True when the pass must stop (log closed or deleted).
  std::function<bool()> aborted;
};

using SegmentGroup = std::vector<std::shared_ptr<Segment>>;

// The files CleanGroup wrote: <base>.log.cleaned and its indexes, and the
// aborted transactions the cleaned segment's .txnindex must list.
struct CleanedGroup {
  Offset base;
  std::vector<AbortedTxn> aborted;
};

class CleanPass {
 public:
  CleanPass(CleanPassInput input, CleanPassHooks hooks, OffsetMap& map);

  // Step 1. kShuttingDown when aborted; kCorrupt for unreadable batches.
  Status BuildOffsetMap();
  // First offset not covered by this pass (the next cleaner checkpoint).
  Offset End() const { return end_; }
  bool map_full() const { return map_full_; }

  // Step 2.
  std::vector<SegmentGroup> GroupSegments() const;

  // Step 3: writes, flushes and closes the cleaned files of `group`. Groups
  // go in offset order (the transactions' state carries over). On error the
  // .cleaned files are removed.
  Result<CleanedGroup> CleanGroup(const SegmentGroup& group);

  // Counters so far (bytes, records, map bytes).
  const CleaningResult& counters() const { return counters_; }

 private:
  Result<bool> MapSegment(const Segment& seg, uint64_t from, Offset next_start);
  Result<bool> MapBatch(const protocol::BatchHeader& h, ByteView batch);
  // Whether `h` holds records of a transaction in_.aborted lists.
  bool InAbortedTxn(const protocol::BatchHeader& h) const;
  Status CleanSegmentInto(const Segment& seg, bool last_in_group, Segment& dest);
  // Filters batch `h` of a segment being cleaned.
  Result<FilteredBatch> FilterOne(const protocol::BatchHeader& h, ByteView batch,
                                  BatchFilterOptions options);
  // Whether record `r` at `offset` of batch `h` stays; `aborted_txn` when
  // the batch belongs to an aborted transaction (InAbortedTxn).
  bool Retain(const protocol::BatchHeader& h, Offset offset, const protocol::Record& r,
              bool aborted_txn) const;

  CleanPassInput in_;
  CleanPassHooks hooks_;
  OffsetMap& map_;
  CleanedTxns txns_;
  Offset end_;
  bool map_full_ = false;
  CleaningResult counters_;
};

// Iterates the whole batches of a segment's byte range, reading it in large
// chunks (one pread per chunk instead of two per batch).
class SegmentBatchReader {
 public:
  SegmentBatchReader(const Segment& seg, uint64_t from, uint64_t limit,
                     size_t chunk_bytes = 1u << 20)
      : seg_(seg), pos_(from), limit_(limit), chunk_(chunk_bytes) {}

  // The next batch, or false at the end. kCorrupt for a bad header or a
  // batch passing the limit. The view is valid until the next call.
  Result<bool> Next(protocol::BatchHeader* header, ByteView* batch);
  // Position of the batch returned last, and of the byte after it.
  uint64_t batch_position() const { return batch_pos_; }
  uint64_t position() const { return pos_; }

 private:
  Status Fill(size_t at_least);

  const Segment& seg_;
  uint64_t pos_;
  uint64_t limit_;
  size_t chunk_;
  Bytes buf_;
  uint64_t buf_pos_ = 0;  // file position of buf_[0]
  uint64_t batch_pos_ = 0;
};

}  // namespace strata::storage
