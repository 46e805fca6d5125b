#include "storage/txn_tracker.h"

#include <algorithm>

namespace strata::storage {

void TxnTracker::Start(int64_t producer_id, Offset first_offset) {
  open_[first_offset] = producer_id;
}

void TxnTracker::Complete(CompletedTxn& txn) {
  txn.last_stable_offset = txn.last_offset + 1;
  for (const auto& [first, producer] : open_) {
    if (producer != txn.producer_id) {
      txn.last_stable_offset = std::min(txn.last_stable_offset, first);
      break;  // the earliest of another producer
    }
  }
  open_.erase(txn.first_offset);
  unreplicated_[txn.first_offset] = txn;
}

void TxnTracker::OnHighWatermark(Offset hw) {
  std::erase_if(unreplicated_, [hw](const auto& entry) { return entry.second.last_offset < hw; });
}

std::optional<Offset> TxnTracker::FirstUnstableOffset() const {
  std::optional<Offset> first;
  if (!open_.empty()) first = open_.begin()->first;
  if (!unreplicated_.empty()) {
    first = first ? std::min(*first, unreplicated_.begin()->first) : unreplicated_.begin()->first;
  }
  return first;
}

void TxnTracker::Clear() {
  open_.clear();
  unreplicated_.clear();
}

}  // namespace strata::storage
