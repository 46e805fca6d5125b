#pragma once
// ViewChangeSignal: what wakes a controller-side worker thread. It watches
// the metadata view for keys under some prefixes (and for reloads) and lets
// the owner's thread sleep until such a change, a deadline or Stop. The
// owner keeps the thread and its loop; this keeps the subscription, the
// flag and the condition variable that every such worker needs.
//
// Thread-safety: all members may be called from any thread. The owner calls
// Stop and joins its thread before the signal is destroyed.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/metadata_view.h"

namespace strata::cluster {

class ViewChangeSignal {
 public:
  using Clock = std::chrono::steady_clock;

  // Watches `view` for changes of keys starting with any of `prefixes`.
  // Starts as changed, so the first wait returns at once.
  ViewChangeSignal(MetadataView& view, std::vector<std::string> prefixes);
  ~ViewChangeSignal();
  ViewChangeSignal(const ViewChangeSignal&) = delete;
  ViewChangeSignal& operator=(const ViewChangeSignal&) = delete;

  struct Wake {
    bool changed = false;   // a relevant change came (taken: reported once)
    bool stopping = false;  // Stop was called: the owner's loop returns
  };
  // Sleeps until a change, Stop or `until`.
  Wake WaitUntil(Clock::time_point until);
  // Sleeps until Stop or `until`, ignoring changes (a pause); true when
  // stopping.
  bool PauseUntil(Clock::time_point until);
  // Makes the next wait return at once as changed (decide again).
  void MarkChanged();
  void Stop();
  bool stopping() const;

 private:
  MetadataView& view_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool changed_ = true;
  bool stopping_ = false;
  int subscription_ = 0;
};

}  // namespace strata::cluster
