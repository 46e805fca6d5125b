#include "kafka/fetch_session.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

#include "base/metrics.h"

namespace strata::kafka {

namespace {

using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;
using Kind = FetchSessionContext::Kind;

constexpr int32_t kFinalEpoch = -1;
constexpr int32_t kInitialEpoch = 0;

int32_t NextEpoch(int32_t epoch) {
  return epoch == std::numeric_limits<int32_t>::max() ? 1 : epoch + 1;
}

// Kafka's EvictableKey: which of two sessions is worth less (evicted first).
std::tuple<bool, size_t, int32_t> Worth(bool privileged, size_t size, int32_t id) {
  return {privileged, size, id};
}

// What an incremental answer must say about a partition (Kafka's
// CachedPartition.maybeUpdateResponseData); remembers what it tells.
bool MustSend(SessionPartition& cached, const FetchResponse::Partition& p) {
  bool must = p.records.size() > 0;
  if (cached.high_watermark != p.high_watermark) {
    cached.high_watermark = p.high_watermark;
    must = true;
  }
  if (cached.log_start_offset != p.log_start_offset) {
    cached.log_start_offset = p.log_start_offset;
    must = true;
  }
  if (p.error_code != 0) {
    cached.high_watermark = -1;  // sent again once the error is gone
    must = true;
  }
  return must || p.preferred_read_replica != -1 ||
         (p.diverging_epoch.has_value() && p.diverging_epoch->epoch >= 0);
}

}  // namespace

FetchSessionContext FetchSessionCache::Begin(FetchRequest& req, bool privileged, int64_t now_ms) {
  if (req.session_epoch != kFinalEpoch && req.session_epoch != kInitialEpoch) {
    return BeginIncremental(req, privileged, now_ms);
  }
  FetchSessionContext context;
  context.privileged = privileged;
  std::lock_guard lock(mu_);
  // A full fetch naming a session closes it (an unknown one is no error).
  if (req.session_id != 0) RemoveLocked(req.session_id);
  if (req.session_epoch == kInitialEpoch) {
    context.kind = Kind::kFull;
    ++counts_.full;
  }
  return context;
}

FetchSessionContext FetchSessionCache::BeginIncremental(FetchRequest& req, bool privileged,
                                                        int64_t now_ms) {
  FetchSessionContext context;
  context.privileged = privileged;
  std::lock_guard lock(mu_);
  auto found = sessions_.find(req.session_id);
  if (found == sessions_.end()) {
    ++counts_.errors;
    context.error = ErrorCode::kFetchSessionIdNotFound;
    return context;
  }
  FetchSession& s = *found->second;
  if (s.epoch != req.session_epoch) {
    ++counts_.errors;
    context.error = ErrorCode::kInvalidFetchSessionEpoch;
    return context;
  }
  for (const FetchRequest::Topic& t : req.topics) {
    for (const FetchRequest::Partition& p : t.partitions) {
      TopicPartition tp{t.topic, p.partition};
      if (auto it = s.index.find(tp); it != s.index.end()) {
        it->second->fetch = p;
      } else {
        s.order.push_back(SessionPartition{tp, p});
        s.index.emplace(std::move(tp), std::prev(s.order.end()));
      }
    }
  }
  for (const FetchRequest::ForgottenTopic& t : req.forgotten_topics_data) {
    for (int32_t partition : t.partitions) {
      if (auto it = s.index.find(TopicPartition{t.topic, partition}); it != s.index.end()) {
        s.order.erase(it->second);
        s.index.erase(it);
      }
    }
  }
  req.forgotten_topics_data.clear();
  req.topics.clear();
  if (s.order.empty()) {  // nothing left: closed, and answered without a session
    RemoveLocked(s.id);
    return context;
  }
  s.last_used_ms = now_ms;
  s.epoch = NextEpoch(s.epoch);
  context.kind = Kind::kIncremental;
  context.session = found->second;
  context.answered_epoch = s.epoch;
  ++counts_.incremental;
  // The session's partitions in its order; a topic appears once per run of
  // its partitions (as Kafka groups them).
  for (const SessionPartition& sp : s.order) {
    if (req.topics.empty() || req.topics.back().topic != sp.tp.topic) {
      req.topics.push_back(FetchRequest::Topic{sp.tp.topic, {}});
    }
    req.topics.back().partitions.push_back(sp.fetch);
  }
  return context;
}

void FetchSessionCache::Finish(const FetchSessionContext& context, const FetchRequest& req,
                               FetchResponse& resp, bool throttled, int64_t now_ms) {
  if (context.error != ErrorCode::kNone) {
    resp = FetchResponse{};
    resp.error_code = protocol::Code(context.error);
    return;
  }
  resp.session_id = 0;
  if (context.kind == Kind::kIncremental) {
    FinishIncremental(context, resp, throttled);
  } else if (context.kind == Kind::kFull && !throttled) {
    std::lock_guard lock(mu_);
    resp.session_id = CreateLocked(req, resp, context.privileged, now_ms);
  }
}

void FetchSessionCache::FinishIncremental(const FetchSessionContext& context, FetchResponse& resp,
                                          bool throttled) {
  std::lock_guard lock(mu_);
  FetchSession& s = *context.session;
  if (s.epoch != context.answered_epoch) {
    // Another fetch of this session was taken while this one waited.
    resp = FetchResponse{};
    resp.error_code = protocol::Code(ErrorCode::kInvalidFetchSessionEpoch);
    resp.session_id = s.id;
    return;
  }
  resp.session_id = s.id;
  if (throttled) return;  // nothing sent: the session remembers nothing new
  std::vector<std::list<SessionPartition>::iterator> sent_records;
  for (FetchResponse::Topic& topic : resp.responses) {
    std::erase_if(topic.partitions, [&](const FetchResponse::Partition& p) {
      auto it = s.index.find(TopicPartition{topic.topic, p.partition_index});
      if (it == s.index.end()) return false;
      if (p.records.size() > 0) sent_records.push_back(it->second);
      return !MustSend(*it->second, p);
    });
  }
  std::erase_if(resp.responses, [](const FetchResponse::Topic& t) { return t.partitions.empty(); });
  for (auto it : sent_records) s.order.splice(s.order.end(), s.order, it);
}

int32_t FetchSessionCache::CreateLocked(const FetchRequest& req, const FetchResponse& resp,
                                        bool privileged, int64_t now_ms) {
  size_t size = 0;
  for (const auto& t : req.topics) size += t.partitions.size();
  if (max_sessions_ <= 0) return 0;
  if (sessions_.size() >= size_t(max_sessions_) && !TryEvictLocked(privileged, size, now_ms)) {
    return 0;
  }
  auto s = std::make_shared<FetchSession>();
  s->id = NewIdLocked();
  s->privileged = privileged;
  s->created_ms = s->last_used_ms = now_ms;
  // The answer's partitions are the request's, in order.
  std::vector<const FetchResponse::Partition*> answered;
  for (const auto& t : resp.responses) {
    for (const auto& p : t.partitions) answered.push_back(&p);
  }
  size_t i = 0;
  for (const FetchRequest::Topic& t : req.topics) {
    for (const FetchRequest::Partition& p : t.partitions) {
      SessionPartition sp{TopicPartition{t.topic, p.partition}, p};
      const FetchResponse::Partition* a = i < answered.size() ? answered[i] : nullptr;
      ++i;
      if (a != nullptr && a->partition_index == p.partition && a->error_code == 0) {
        sp.high_watermark = a->high_watermark;
        sp.log_start_offset = a->log_start_offset;
      }
      if (auto it = s->index.find(sp.tp); it != s->index.end()) {
        *it->second = std::move(sp);  // named twice: the last one counts
        continue;
      }
      s->order.push_back(std::move(sp));
      s->index.emplace(s->order.back().tp, std::prev(s->order.end()));
    }
  }
  const int32_t id = s->id;
  sessions_.emplace(id, std::move(s));
  return id;
}

bool FetchSessionCache::TryEvictLocked(bool privileged, size_t size, int64_t now_ms) {
  std::shared_ptr<FetchSession> idlest, cheapest;
  for (const auto& [id, s] : sessions_) {
    if (!idlest || s->last_used_ms < idlest->last_used_ms) idlest = s;
    const bool old = now_ms - s->created_ms > kEvictionMs;
    const bool evictable = privileged ? (!s->privileged || old) : old;
    if (evictable && (!cheapest || Worth(s->privileged, s->order.size(), s->id) <
                                       Worth(cheapest->privileged, cheapest->order.size(),
                                             cheapest->id))) {
      cheapest = s;
    }
  }
  std::shared_ptr<FetchSession> victim;
  if (idlest && now_ms - idlest->last_used_ms > kEvictionMs) {
    victim = idlest;
  } else if (cheapest && !(Worth(privileged, size, 0) <
                           Worth(cheapest->privileged, cheapest->order.size(), cheapest->id))) {
    victim = cheapest;
  }
  if (!victim) return false;
  RemoveLocked(victim->id);
  ++counts_.evictions;
  return true;
}

void FetchSessionCache::RemoveLocked(int32_t id) { sessions_.erase(id); }

int32_t FetchSessionCache::NewIdLocked() {
  std::uniform_int_distribution<int32_t> any(1, std::numeric_limits<int32_t>::max());
  for (;;) {
    const int32_t id = any(random_);
    if (!sessions_.contains(id)) return id;
  }
}

FetchSessionCounters FetchSessionCache::counters() const {
  std::lock_guard lock(mu_);
  FetchSessionCounters c = counts_;
  c.sessions = sessions_.size();
  c.partitions = 0;
  for (const auto& [id, s] : sessions_) c.partitions += s->order.size();
  return c;
}

void RegisterFetchSessionMetrics(std::shared_ptr<FetchSessionCache> cache) {
  metrics::Registry& reg = metrics::Global();
  auto get = [cache](uint64_t FetchSessionCounters::*field) {
    return [cache, field] { return double(cache->counters().*field); };
  };
  reg.SetGauge("strata_fetch_sessions", "Open fetch sessions (KIP-227)", {},
               get(&FetchSessionCounters::sessions));
  reg.SetGauge("strata_fetch_session_partitions", "Partitions in all open fetch sessions", {},
               get(&FetchSessionCounters::partitions));
  reg.SetCounterFunc("strata_fetch_session_evictions_total",
                     "Fetch sessions evicted for a new one", {},
                     get(&FetchSessionCounters::evictions));
  reg.SetCounterFunc("strata_fetch_requests_total", "Fetch requests by session kind",
                     {{"kind", "full"}}, get(&FetchSessionCounters::full));
  reg.SetCounterFunc("strata_fetch_requests_total", "Fetch requests by session kind",
                     {{"kind", "incremental"}}, get(&FetchSessionCounters::incremental));
  reg.SetCounterFunc("strata_fetch_session_errors_total",
                     "Fetches answered FETCH_SESSION_ID_NOT_FOUND or INVALID_FETCH_SESSION_EPOCH",
                     {}, get(&FetchSessionCounters::errors));
}

}  // namespace strata::kafka
