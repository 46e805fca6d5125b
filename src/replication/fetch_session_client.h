#pragma once
// FetchSessionClient: the fetching side of a fetch session (KIP-227), as
// Kafka's FetchSessionHandler keeps it. A follower fetching many partitions
// from one leader sends them all once (a full fetch, which opens a session),
// then only those new or changed since (fetch offset, log start, epochs,
// limits) and those it no longer wants (forgotten), and the leader answers
// only about partitions with news.
//
//  - Next request: (0, 0) without a session; (id, 0), a full fetch that
//    replaces the session, after a failed round trip or an error other than
//    FETCH_SESSION_ID_NOT_FOUND; (id, epoch + 1) after an answered
//    incremental fetch.
//  - A leader that opens no session (id 0: no slot, or sessions off) is asked
//    with full fetches each time.
//
// Not thread-safe: one fetch loop uses it.
#include <cstdint>
#include <map>
#include <vector>

#include "base/topic_partition.h"
#include "protocol/messages/fetch.h"

namespace strata::replication {

class FetchSessionClient {
 public:
  // Fills req.topics / forgotten_topics_data / session id and epoch for a
  // round that wants `wanted` (in order).
  void Build(const std::vector<protocol::FetchRequest::Topic>& wanted,
             protocol::FetchRequest& req);
  // The answer to the last Build's request arrived.
  void OnResponse(const protocol::FetchResponse& resp);
  // The last request got no answer.
  void OnFailure();

  bool last_was_incremental() const { return last_incremental_; }
  int32_t session_id() const { return id_; }

 private:
  int32_t id_ = 0;
  int32_t epoch_ = 0;  // of the next request
  // The partitions the leader's session holds, as last sent.
  std::map<TopicPartition, protocol::FetchRequest::Partition> session_;
  // What the session becomes if the last request is answered.
  std::map<TopicPartition, protocol::FetchRequest::Partition> sent_;
  bool last_incremental_ = false;
};

}  // namespace strata::replication
