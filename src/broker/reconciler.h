#pragma once
// Reconciler: the thread that keeps this broker's replicas following the
// metadata view. It runs its owner's pass (TopicManager's: open what is newly
// placed here, apply changed records, remove what is no longer placed here)
// once when started, again each time keys under the watched prefixes change
// (topics, partitions, broker configs), and once a second while the last pass
// failed (a log that would not open). No pass on an idle tick: a pass walks
// every partition.
//
// Thread-safety: Start and Stop from the owner; the pass runs on the
// reconciler's thread and must take the owner's locks itself.
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "cluster/metadata_view.h"
#include "cluster/view_change_signal.h"

namespace strata::broker {

class Reconciler {
 public:
  using Pass = std::function<Status()>;

  Reconciler(cluster::MetadataView& view, std::vector<std::string> prefixes, Pass pass);
  ~Reconciler() { Stop(); }
  Reconciler(const Reconciler&) = delete;
  Reconciler& operator=(const Reconciler&) = delete;

  void Start();
  void Stop();  // joins the thread; idempotent

  int64_t passes() const { return passes_.load(); }
  int64_t failed_passes() const { return failed_passes_.load(); }

 private:
  void Loop();

  cluster::ViewChangeSignal signal_;
  Pass pass_;
  std::thread thread_;
  std::atomic<int64_t> passes_{0};
  std::atomic<int64_t> failed_passes_{0};
};

}  // namespace strata::broker
