#pragma once
// TxnTracker: the transactions of one partition that bound its last stable
// offset (LSO): those still open, and those a marker completed whose marker
// is not yet below the high watermark (Kafka's ongoing and unreplicated
// transactions). A read_committed consumer reads only below
//   LSO = min(first offset of any of them, high watermark).
// Also gives each completed transaction the LSO right after its marker,
// which its aborted-transaction index entry records.
//
// Thread-safety: none; the owning Log's mutex serialises all calls.
#include <cstdint>
#include <map>
#include <optional>

#include "base/offset.h"

namespace strata::storage {

// A transaction that an end-transaction marker completed.
struct CompletedTxn {
  int64_t producer_id = -1;
  Offset first_offset = kNoOffset;  // its first record in this partition
  Offset last_offset = kNoOffset;   // its marker
  bool aborted = false;
  // The LSO right after the marker: the first offset of the earliest open
  // transaction of another producer, else the marker's offset + 1.
  Offset last_stable_offset = kNoOffset;
  bool operator==(const CompletedTxn&) const = default;
};

class TxnTracker {
 public:
  void Start(int64_t producer_id, Offset first_offset);
  // Moves the transaction starting at `txn.first_offset` from open to
  // unreplicated, and fills in its `last_stable_offset`.
  void Complete(CompletedTxn& txn);
  // Forgets the completed transactions whose markers are below `hw`.
  void OnHighWatermark(Offset hw);
  // The first offset a read_committed reader may not pass, before bounding
  // by the high watermark; nullopt when no transaction holds it back.
  std::optional<Offset> FirstUnstableOffset() const;
  void Clear();

  // First offset -> producer of each open transaction, in offset order.
  const std::map<Offset, int64_t>& open() const { return open_; }
  size_t unreplicated() const { return unreplicated_.size(); }

 private:
  std::map<Offset, int64_t> open_;
  std::map<Offset, CompletedTxn> unreplicated_;  // by first offset
};

}  // namespace strata::storage
