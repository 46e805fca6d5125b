#include "storage/cleaner_txn.h"

#include <algorithm>

namespace strata::storage {

CleanedTxns::CleanedTxns(std::vector<AbortedTxn> aborted) {
  std::sort(aborted.begin(), aborted.end(), [](const AbortedTxn& a, const AbortedTxn& b) {
    return a.first_offset < b.first_offset;
  });
  pending_.assign(aborted.begin(), aborted.end());
}

void CleanedTxns::StartAbortsUpTo(Offset last_offset) {
  while (!pending_.empty() && pending_.front().first_offset <= last_offset) {
    open_aborted_[pending_.front().producer_id] = OpenAbort{pending_.front(), false};
    pending_.pop_front();
  }
}

bool CleanedTxns::OnDataBatch(const protocol::BatchHeader& h) {
  StartAbortsUpTo(h.last_offset());
  if (!h.transactional()) return false;
  auto it = open_aborted_.find(h.producer_id);
  if (it != open_aborted_.end()) {
    it->second.batch_seen = true;
    return true;
  }
  open_committed_.insert(h.producer_id);
  return false;
}

bool CleanedTxns::OnControlBatch(const protocol::BatchHeader& h,
                                 const std::optional<protocol::TxnMarker>& marker, bool empty) {
  StartAbortsUpTo(h.last_offset());
  // An emptied marker batch was judged by an earlier pass already.
  if (empty) return true;
  if (!marker) return false;  // another control type: kept as it is
  if (marker->type == protocol::ControlType::kAbort) {
    auto it = open_aborted_.find(h.producer_id);
    if (it == open_aborted_.end()) return true;
    const bool seen = it->second.batch_seen;
    if (seen) index_.push_back(it->second.txn);
    open_aborted_.erase(it);
    return !seen;
  }
  return open_committed_.erase(h.producer_id) == 0;
}

std::vector<AbortedTxn> CleanedTxns::TakeIndexEntries() {
  std::vector<AbortedTxn> out;
  out.swap(index_);
  return out;
}

}  // namespace strata::storage
