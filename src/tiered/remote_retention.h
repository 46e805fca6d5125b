#pragma once
// RemoteRetention: deletes what a tiered partition no longer keeps.
//  - Remote segments past retention.ms / retention.bytes (counted over
//    local + remote) or wholly below a DeleteRecords floor, and segments a
//    longer upload replaced: DELETE_STARTED (durable) -> objects deleted ->
//    DELETE_FINISHED, then the log start moves up locally too.
//  - Remote directories of deleted topics: recorded as pending in the
//    metadata store first, retried until the store answers, so an outage
//    leaves no orphans.
// A deposed leader or a reader deletes nothing. Store calls run on its own
// thread when asked from a network thread (ExpireSoon, DeleteDirSoon).
#include <asio/thread_pool.hpp>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "base/result.h"
#include "tiered/tier_context.h"
#include "tiered/tiered_partition.h"

namespace strata::tiered {

class RemoteRetention {
 public:
  explicit RemoteRetention(const TierContext& ctx);
  ~RemoteRetention();  // waits for the deletion thread
  RemoteRetention(const RemoteRetention&) = delete;
  RemoteRetention& operator=(const RemoteRetention&) = delete;

  // Reads the pending directory deletions the metadata store recorded.
  void LoadPending();

  // One round over `p`: finishes half-done deletions, expires segments,
  // moves the log start. Returns the remote segments expired.
  int Expire(TieredPartition& p);
  // Expire, soon, on the deletion thread.
  void ExpireSoon(std::shared_ptr<TieredPartition> p);

  // Records `dir` (a removed partition's) for deletion and tries it soon.
  void DeleteDirSoon(const std::string& dir);
  // Tries every pending directory deletion once; returns how many are still
  // pending.
  size_t DeletePendingDirsOnce();
  size_t pending_dir_count() const;
  // Deletes the remote directories of partitions [0, partitions) of a
  // deleted topic, now, on the calling thread; idempotent. Stops at the
  // first failure, which it returns.
  Status DeleteTopicData(const std::string& topic, const std::string& topic_id_base64,
                         int32_t partitions);

 private:
  // DELETE_STARTED (durable) -> objects deleted -> DELETE_FINISHED. False
  // (the entry stays DELETE_STARTED, retried next round) on failure.
  bool DeleteSegmentLocked(TieredPartition& p, RemoteSegment& seg);
  // Whether `s` (COPY_FINISHED) goes, with `total` bytes kept over local +
  // remote before it.
  bool ExpiresLocked(const TieredPartition& p, const RemoteSegment& s, int64_t total,
                     int64_t now) const;
  // Local copies of expired offsets go too, so the log start moves up.
  void MoveLogStartLocked(TieredPartition& p, Offset moved_to);

  const TierContext& ctx_;
  mutable std::mutex dirs_mu_;  // guards pending_dirs_ (never held across store calls)
  std::set<std::string> pending_dirs_;
  std::mutex pass_mu_;  // one DeletePendingDirsOnce at a time
  // Deletion's store calls can block for as long as the store is slow or
  // down, which must not hold threads fetches need.
  asio::thread_pool pool_{1};
};

}  // namespace strata::tiered
