#pragma once
// RemoteCopier: uploads a tiered partition's rolled segments. A rolled
// segment is queued once it is wholly committed (below the high watermark),
// recorded COPY_STARTED in the manifest before any object is written,
// uploaded on the copier pool (one at a time per partition, several once
// its backlog passes parallel_lag_segments), and committed COPY_FINISHED in
// offset order, so the copied offset never passes a segment that failed.
// Failures go back to the queue and back off; nothing is skipped. With a
// copy quota, an upload starts only while the recent upload rate is within it.
//
// Thread-safety: Copy and UploadsDone take the partition's mutex; uploads
// run on the pool without it and take it to commit.
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tiered/tier_context.h"
#include "tiered/tiered_partition.h"

namespace strata::tiered {

class RemoteCopier {
 public:
  explicit RemoteCopier(const TierContext& ctx);
  ~RemoteCopier();  // Stop()
  RemoteCopier(const RemoteCopier&) = delete;
  RemoteCopier& operator=(const RemoteCopier&) = delete;

  void Start();  // starts options.copier_threads upload threads
  // Drops queued uploads (their segments stay COPY_STARTED and are redone
  // by the next start) and waits for running ones; idempotent.
  void Stop();

  // Writes `p`'s manifest if a commit left it unwritten, queues newly
  // committed rolled segments, commits finished uploads and dispatches
  // more. Needs `p->mu` held and the manifest loaded.
  void CopyLocked(const std::shared_ptr<TieredPartition>& p);
  // Whether every committed rolled segment of `p` is COPY_FINISHED and the
  // manifest saying so written. Needs `p.mu` held.
  static bool UploadsDoneLocked(TieredPartition& p);

 private:
  void QueueRolledLocked(TieredPartition& p);
  void CommitLocked(TieredPartition& p);
  void DispatchLocked(const std::shared_ptr<TieredPartition>& p);
  void RunUpload(const std::shared_ptr<TieredPartition>& p, Offset base);
  // Waits while the copy quota is used up; false when stopped meanwhile.
  bool WaitForCopyQuota();

  const TierContext& ctx_;
  std::mutex mu_;  // guards jobs_ and stopping_
  std::condition_variable cv_;
  std::condition_variable quota_cv_;  // wakes quota waits at Stop (not cv_: a job's wake-up)
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace strata::tiered
