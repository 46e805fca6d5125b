#include "replication/fetch_session_client.h"

#include <limits>

#include "protocol/error_code.h"

namespace strata::replication {

using protocol::FetchRequest;
using protocol::FetchResponse;

void FetchSessionClient::Build(const std::vector<FetchRequest::Topic>& wanted, FetchRequest& req) {
  req.session_id = id_;
  req.session_epoch = epoch_;
  req.topics.clear();
  req.forgotten_topics_data.clear();
  sent_.clear();
  for (const FetchRequest::Topic& t : wanted) {
    for (const FetchRequest::Partition& p : t.partitions) {
      sent_[TopicPartition{t.topic, p.partition}] = p;
    }
  }
  last_incremental_ = id_ != 0 && epoch_ > 0;
  if (!last_incremental_) {
    req.topics = wanted;
    return;
  }
  for (const FetchRequest::Topic& t : wanted) {
    for (const FetchRequest::Partition& p : t.partitions) {
      auto had = session_.find(TopicPartition{t.topic, p.partition});
      if (had != session_.end() && had->second == p) continue;  // the leader has it so
      if (req.topics.empty() || req.topics.back().topic != t.topic) {
        req.topics.push_back(FetchRequest::Topic{t.topic, {}});
      }
      req.topics.back().partitions.push_back(p);
    }
  }
  for (const auto& [tp, p] : session_) {
    if (sent_.contains(tp)) continue;
    if (req.forgotten_topics_data.empty() || req.forgotten_topics_data.back().topic != tp.topic) {
      req.forgotten_topics_data.push_back(FetchRequest::ForgottenTopic{tp.topic, {}});
    }
    req.forgotten_topics_data.back().partitions.push_back(tp.partition);
  }
}

void FetchSessionClient::OnResponse(const FetchResponse& resp) {
  if (resp.error_code == protocol::Code(protocol::ErrorCode::kFetchSessionIdNotFound)) {
    id_ = epoch_ = 0;
    session_.clear();
    return;
  }
  if (resp.error_code != 0 || resp.session_id == 0) {
    // Another error: a full fetch replaces the session. No session: full
    // fetches from now on.
    if (resp.session_id == 0 && resp.error_code == 0) id_ = 0;
    epoch_ = 0;
    session_.clear();
    return;
  }
  id_ = resp.session_id;
  epoch_ = last_incremental_ && epoch_ < std::numeric_limits<int32_t>::max() ? epoch_ + 1 : 1;
  session_ = std::move(sent_);
  sent_.clear();
}

void FetchSessionClient::OnFailure() {
  epoch_ = 0;
  session_.clear();
}

}  // namespace strata::replication
