#pragma once
// Fetch sessions (KIP-227): a client fetching many partitions opens a session
// with a full fetch, then sends only what changed (incremental fetches) and is
// answered only about partitions with something new. The rules are Kafka's
// (FetchManager, FetchSession, FetchSessionCacheShard):
//
//  - (session id, epoch): epoch -1 is a fetch without a session (closing the
//    one named); epoch 0 a full fetch that may open a session (closing the one
//    named); any other epoch an incremental fetch of an open session, which
//    must carry the session's next epoch (FETCH_SESSION_ID_NOT_FOUND,
//    INVALID_FETCH_SESSION_EPOCH otherwise: the answer is only that error).
//  - An incremental fetch adds or updates the partitions it names, then drops
//    its forgotten topics, and reads every partition of the session, in the
//    session's order. Its answer holds the partitions with records, a changed
//    high watermark or log start offset, an error, a preferred read replica or
//    a diverging epoch; those sent with records go to the end of the order,
//    so a response that fills up starts elsewhere next time.
//  - A session is created when a full fetch is answered (not when throttled),
//    if there is a free slot (max.incremental.fetch.session.cache.slots) or one
//    can be evicted: a session idle for two minutes, or else the least
//    valuable evictable one (unprivileged before followers' privileged ones,
//    then fewest partitions) if the new session is worth at least as much.
//    Followers' sessions are evictable by other followers' only once two
//    minutes old. (One cache here; Kafka 3.8+ splits it into 8 shards.)
//
// Thread-safety: every method is safe from any thread.
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include "base/topic_partition.h"
#include "protocol/error_code.h"
#include "protocol/messages/fetch.h"

namespace strata::kafka {

// One partition of a session: what its fetcher asks, and what it was last
// told (-1: nothing yet, so the next answer includes it).
struct SessionPartition {
  TopicPartition tp;
  protocol::FetchRequest::Partition fetch;
  int64_t high_watermark = -1;
  int64_t log_start_offset = -1;
};

// An open session. Guarded by its cache's mutex.
struct FetchSession {
  int32_t id = 0;
  int32_t epoch = 1;  // the epoch the next incremental fetch must carry
  bool privileged = false;  // a follower's
  int64_t created_ms = 0;
  int64_t last_used_ms = 0;
  std::list<SessionPartition> order;
  std::map<TopicPartition, std::list<SessionPartition>::iterator> index;
};

// What Begin made of a request, for Finish.
struct FetchSessionContext {
  enum class Kind { kSessionless, kFull, kIncremental };
  Kind kind = Kind::kSessionless;
  // Not kNone: the whole answer is this error (no partitions are read).
  protocol::ErrorCode error = protocol::ErrorCode::kNone;
  bool privileged = false;
  std::shared_ptr<FetchSession> session;  // kIncremental
  int32_t answered_epoch = 0;             // the session's epoch once Begin took this request
};

struct FetchSessionCounters {
  uint64_t sessions = 0;
  uint64_t partitions = 0;  // in all sessions
  uint64_t evictions = 0;
  uint64_t full = 0;         // full fetches (epoch 0)
  uint64_t incremental = 0;  // incremental fetches accepted
  uint64_t errors = 0;       // fetches answered with a session error
};

class FetchSessionCache {
 public:
  static constexpr int64_t kEvictionMs = 120'000;  // Kafka's, not configurable there either

  explicit FetchSessionCache(int max_sessions) : max_sessions_(max_sessions) {}

  // Classifies `req` (Fetch v7+). For an incremental fetch, updates the
  // session and replaces req.topics with all of its partitions, in order.
  FetchSessionContext Begin(protocol::FetchRequest& req, bool privileged, int64_t now_ms);

  // Completes `resp`, the answer to the request Begin took (req.topics and
  // resp.responses in the same order): its session id; for an incremental
  // fetch, only the partitions with news (remembering what was sent); for a
  // full one, a new session of its partitions. A throttled answer carries no
  // partitions and opens no session.
  void Finish(const FetchSessionContext& context, const protocol::FetchRequest& req,
              protocol::FetchResponse& resp, bool throttled, int64_t now_ms);

  FetchSessionCounters counters() const;

 private:
  FetchSessionContext BeginIncremental(protocol::FetchRequest& req, bool privileged,
                                       int64_t now_ms);
  void FinishIncremental(const FetchSessionContext& context, protocol::FetchResponse& resp,
                         bool throttled);
  int32_t CreateLocked(const protocol::FetchRequest& req, const protocol::FetchResponse& resp,
                       bool privileged, int64_t now_ms);
  bool TryEvictLocked(bool privileged, size_t size, int64_t now_ms);
  void RemoveLocked(int32_t id);
  int32_t NewIdLocked();

  const int max_sessions_;
  mutable std::mutex mu_;
  std::map<int32_t, std::shared_ptr<FetchSession>> sessions_;  // guarded by mu_
  FetchSessionCounters counts_;                                // guarded by mu_
  std::mt19937 random_{std::random_device{}()};                // guarded by mu_
};

// Exports the cache's counts on /metrics (Kafka's FetchSessionCache metrics:
// NumIncrementalFetchSessions, NumIncrementalFetchPartitionsCached,
// IncrementalFetchSessionEvictionsPerSec), replacing an earlier cache's.
void RegisterFetchSessionMetrics(std::shared_ptr<FetchSessionCache> cache);

}  // namespace strata::kafka
