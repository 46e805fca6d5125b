#pragma once
// CleanedTxns: what one compaction pass knows of the transactions in the
// range it rewrites (Kafka's CleanedTransactionMetadata). Walking the batches
// in offset order from the log start, it tracks per producer the open
// committed transaction (one of its batches was read) and the open aborted
// one (from the .txnindex entries whose first offset has been passed), so
// that at each marker it can tell whether any batch of the transaction is
// still in the log:
//   - a COMMIT marker may go when no batch of its transaction was read;
//   - an ABORT marker may go when no batch of its transaction was read (its
//     records are dropped by the pass that reads them, so the marker and its
//     .txnindex entry outlive them by one pass); otherwise its entry is kept
//     in the cleaned segment's index.
// A marker that may go is first given a delete horizon and removed by a later
// pass past it (LogCleaner's two-step rule, KIP-534), so a reader that saw
// the transaction's records also sees its marker.
//
// Thread-safety: one pass, one thread.
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "protocol/control_record.h"
#include "protocol/record_batch.h"
#include "storage/txn_index.h"

namespace strata::storage {

class CleanedTxns {
 public:
  // `aborted`: the .txnindex entries of every segment the pass may read.
  explicit CleanedTxns(std::vector<AbortedTxn> aborted);

  // A data batch; true when it belongs to an aborted transaction (its
  // records go).
  bool OnDataBatch(const protocol::BatchHeader& h);
  // A control batch carrying `marker` (nullopt: empty, or not a transaction
  // marker); true when no batch of its transaction remains, so the marker
  // may go once its delete horizon has passed.
  bool OnControlBatch(const protocol::BatchHeader& h,
                      const std::optional<protocol::TxnMarker>& marker, bool empty);
  // The aborted transactions whose ABORT markers were read since the last
  // call and still have batches: the index of the segment being written.
  std::vector<AbortedTxn> TakeIndexEntries();

 private:
  struct OpenAbort {
    AbortedTxn txn;
    bool batch_seen = false;
  };
  void StartAbortsUpTo(Offset last_offset);

  std::deque<AbortedTxn> pending_;  // not yet reached, by first offset
  std::unordered_map<int64_t, OpenAbort> open_aborted_;
  std::set<int64_t> open_committed_;
  std::vector<AbortedTxn> index_;
};

}  // namespace strata::storage
