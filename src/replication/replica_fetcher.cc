#include "replication/replica_fetcher.h"

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>

#include "base/metrics.h"
#include "protocol/error_code.h"
#include "protocol/record_batch.h"
#include "replication/logger.h"

namespace strata::replication {

namespace {

using protocol::FetchRequest;
using protocol::FetchResponse;
using Clock = std::chrono::steady_clock;

// Fetch v12: the last version naming topics (v13+ use topic ids) and the
// first with DivergingEpoch.
constexpr int16_t kFetchVersion = 12;

// Follower fetch requests by session kind (KIP-227).
metrics::Counter& FetchRequests(bool incremental) {
  static metrics::Counter& full = metrics::Global().GetCounter(
      "strata_replica_fetch_requests_total", "Fetch requests this broker sent to its leaders",
      {{"kind", "full"}});
  static metrics::Counter& incr = metrics::Global().GetCounter(
      "strata_replica_fetch_requests_total", "Fetch requests this broker sent to its leaders",
      {{"kind", "incremental"}});
  return incremental ? incr : full;
}

metrics::Counter& FetchedBytes() {
  static metrics::Counter& c = metrics::Global().GetCounter(
      "strata_replica_fetched_bytes_total", "Bytes this broker appended from its leaders");
  return c;
}

// Splits fetched bytes into whole batches with CRCs checked. A partial
// batch at the end (a leader may cut one at the size limit) is dropped.
Result<std::vector<storage::BatchInfo>> SplitFetched(ByteView data, size_t& used) {
  std::vector<storage::BatchInfo> infos;
  used = 0;
  while (data.size() - used >= protocol::kBatchHeaderSize) {
    ByteView rest = data.subspan(used);
    STRATA_ASSIGN_OR_RETURN(protocol::BatchHeader h, protocol::ParseBatchHeader(rest));
    if (static_cast<size_t>(h.size_in_bytes()) > rest.size()) break;
    ByteView batch = rest.subspan(0, static_cast<size_t>(h.size_in_bytes()));
    if (!protocol::BatchCrcValid(batch)) {
      return MakeError(Errc::kCorrupt,
                       fmt::format("CRC mismatch in the batch at {}", h.base_offset));
    }
    infos.push_back({.size = static_cast<int32_t>(h.size_in_bytes()),
                     .record_count = h.last_offset_delta + 1,
                     .max_timestamp = h.max_timestamp,
                     .producer_id = h.producer_id,
                     .producer_epoch = h.producer_epoch,
                     .base_sequence = h.base_sequence,
                     .transactional = h.transactional()});
    used += batch.size();
  }
  return infos;
}

}  // namespace

ReplicaFetcher::ReplicaFetcher(std::string name, std::string host, uint16_t port,
                               FetcherOptions options)
    : name_(std::move(name)), host_(std::move(host)), port_(port), options_(options) {
  net::ClientOptions co;
  co.client_id = name_;
  co.request_timeout = options_.timeout + std::chrono::milliseconds(options_.max_wait_ms);
  co.max_connections = 1;
  co.security = options_.security;
  co.max_response_bytes = std::max(options_.max_bytes, options_.partition_max_bytes) + (1 << 20);
  client_ = std::make_unique<net::Client>(io_.get_executor(), host_, port_, co);
  asio::co_spawn(io_, Run(), asio::detached);
  thread_ = std::thread([this] { io_.run(); });
}

ReplicaFetcher::~ReplicaFetcher() {
  stopping_ = true;
  // The loop may be waiting out a backoff: cut it short.
  asio::post(io_, [this] {
    client_->Close();
    backoff_timer_.cancel();
  });
  thread_.join();
  client_.reset();
}

void ReplicaFetcher::Add(FollowedPartition partition) {
  std::lock_guard lock(mu_);
  Key key{partition.topic, partition.partition};
  // An empty replica of a tiered partition starts where the leader says
  // (there is nothing of its own to keep).
  const bool empty = partition.replica->log_end_offset() == partition.replica->log_start_offset();
  int64_t start_at =
      partition.tiered && options_.sync_from_active_segment && empty ? StartTimestamp() : 0;
  partitions_[key] = Entry{std::move(partition), {}, start_at};
}

void ReplicaFetcher::Remove(const std::string& topic, int32_t partition) {
  std::lock_guard lock(mu_);
  partitions_.erase({topic, partition});
}

size_t ReplicaFetcher::partitions() const {
  std::lock_guard lock(mu_);
  return partitions_.size();
}

asio::awaitable<void> ReplicaFetcher::Run() {
  while (!stopping_) {
    bool reached = co_await FetchOnce();
    if (stopping_) break;
    bool idle = false;
    {
      std::lock_guard lock(mu_);
      auto now = Clock::now();
      idle = std::none_of(partitions_.begin(), partitions_.end(),
                          [&](const auto& kv) { return kv.second.paused_until <= now; });
    }
    if (!reached || idle) {
      // Unreachable leader, or nothing to fetch: wait before trying again
      // (Add does not wake the loop; the pause bounds the delay).
      backoff_timer_.expires_after(reached ? std::chrono::milliseconds(50) : options_.backoff);
      // A cancel (the destructor) ends the wait early; no error to handle.
      co_await backoff_timer_.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
    }
  }
}

asio::awaitable<bool> ReplicaFetcher::FetchOnce() {
  if (!co_await StartLogs()) co_return false;
  bool holding = false;
  const std::set<Key> throttled = ThrottledPartitions(holding);
  FetchRequest req;
  req.replica_id = options_.replica_id.value();
  req.max_wait_ms = options_.max_wait_ms;
  req.min_bytes = options_.min_bytes;
  req.max_bytes = options_.max_bytes;
  std::map<Key, LeaderEpoch> epochs;  // the leadership each was fetched under
  {
    std::lock_guard lock(mu_);
    auto now = Clock::now();
    for (auto& [key, e] : partitions_) {
      if (e.paused_until > now || e.start_at != 0) continue;
      if (holding && throttled.contains(key)) continue;
      if (req.topics.empty() || req.topics.back().topic != key.first) {
        req.topics.push_back({key.first, {}});
      }
      FetchRequest::Partition p;
      p.partition = key.second;
      p.current_leader_epoch = e.p.leader_epoch.value();
      p.fetch_offset = e.p.replica->log_end_offset().value();
      p.last_fetched_epoch = e.p.replica->latest_epoch().value();
      p.log_start_offset = e.p.replica->log_start_offset().value();
      p.partition_max_bytes = options_.partition_max_bytes;
      req.topics.back().partitions.push_back(p);
      epochs[key] = e.p.leader_epoch;
    }
  }
  if (epochs.empty()) {
    if (holding) {  // every partition waits for the throttle: not a busy loop
      asio::steady_timer wait(io_);
      wait.expires_after(std::chrono::milliseconds(50));
      co_await wait.async_wait(asio::use_awaitable);
    }
    co_return true;
  }
  // Only what changed since the last round, once the leader keeps a session.
  const std::vector<FetchRequest::Topic> wanted = std::move(req.topics);
  session_.Build(wanted, req);
  FetchRequests(session_.last_was_incremental()).Add(1);
  Bytes body;
  protocol::Encode(req, kFetchVersion, /*flexible=*/true, body);
  auto deadline = Clock::now() + options_.timeout + std::chrono::milliseconds(req.max_wait_ms);
  auto response =
      co_await CallLeader(FetchRequest::kApiKey, kFetchVersion, std::move(body), deadline, "fetch");
  if (!response) {
    session_.OnFailure();
    co_return false;
  }
  // The records point into the response frame, which lives until the end.
  auto decoded = protocol::Decode<FetchResponse>(response->body(), kFetchVersion, true);
  if (!decoded.ok()) {
    session_.OnFailure();
    Log()->warn("{}: unreadable fetch response from {}:{}: {}", name_, host_, port_,
                decoded.error().message);
    co_return false;
  }
  session_.OnResponse(*decoded);
  if (decoded->error_code == Code(protocol::ErrorCode::kFetchSessionIdNotFound) ||
      decoded->error_code == Code(protocol::ErrorCode::kInvalidFetchSessionEpoch)) {
    co_return true;  // the session is gone (a restarted leader): a full fetch at once
  }
  if (decoded->error_code != 0) {
    Log()->warn("{}: fetch from {}:{} answered error {}", name_, host_, port_, decoded->error_code);
    co_return false;
  }
  for (auto& topic : decoded->responses) {
    for (auto& p : topic.partitions) {
      Key key{topic.topic, p.partition_index};
      auto epoch = epochs.find(key);
      if (epoch != epochs.end()) Apply(key, epoch->second, throttled.contains(key), p);
    }
  }
  co_return true;
}

std::set<ReplicaFetcher::Key> ReplicaFetcher::ThrottledPartitions(bool& holding) {
  std::set<Key> out;
  holding = false;
  if (!options_.throttle || options_.throttle->rate() == kUnthrottled) return out;
  std::vector<std::pair<Key, std::function<bool()>>> checks;
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, e] : partitions_) {
      if (e.p.throttled) checks.emplace_back(key, e.p.throttled);
    }
  }
  // Asked outside mu_: the answers come from the broker's topic and
  // partition state, whose locks are never held around calls into here.
  for (auto& [key, check] : checks) {
    if (check()) out.insert(key);
  }
  holding = !out.empty() && options_.throttle->Exceeded();
  return out;
}

asio::awaitable<std::optional<net::Response>> ReplicaFetcher::CallLeader(
    int16_t api_key, int16_t version, Bytes body, std::chrono::steady_clock::time_point deadline,
    const char* what) {
  auto response = co_await client_->Call(api_key, version, std::move(body), deadline);
  if (response.ok()) co_return std::move(response).value();
  if (!stopping_) {
    Log()->warn("{}: {} from {}:{} failed: {}", name_, what, host_, port_,
                response.error().message);
    if (options_.on_unreachable) options_.on_unreachable();
  }
  co_return std::nullopt;
}

void ReplicaFetcher::Apply(const Key& key, LeaderEpoch leader_epoch, bool throttled,
                           FetchResponse::Partition& response) {
  std::shared_ptr<FollowerReplica> replica;
  {
    std::lock_guard lock(mu_);
    auto it = partitions_.find(key);
    // Removed, or a new leadership meanwhile: this answer is not for it.
    if (it == partitions_.end() || it->second.p.leader_epoch != leader_epoch) return;
    replica = it->second.p.replica;
  }
  const std::string label = fmt::format("{}-{}", key.first, key.second);
  const Offset fetched_from = replica->log_end_offset();
  if (response.error_code == Code(protocol::ErrorCode::kOffsetOutOfRange) &&
      Offset(response.log_start_offset) > fetched_from) {
    // The leader's retention (or DeleteRecords) passed this whole log while
    // it was away: start again at the leader's log start, as Kafka's
    // follower does (there is nothing here the leader still has).
    Log()->info("{}: {} ends at {}, below the leader's log start {}; starting the log there", name_,
                label, fetched_from, response.log_start_offset);
    Status st = replica->StartLogAt(leader_epoch, Offset(response.log_start_offset));
    truncations_++;
    if (!st.ok()) Pause(key, leader_epoch, label + ": restarting the log: " + st.error().message);
    return;
  }
  if (response.error_code == Code(protocol::ErrorCode::kOffsetMovedToTieredStorage)) {
    // Below the leader's local log: what it lacks is in remote storage, so
    // the log starts over where the leader says (the next round asks).
    Log()->info("{}: {} ends at {}, below the leader's local log; asking where to start", name_,
                label, fetched_from);
    std::lock_guard lock(mu_);
    auto it = partitions_.find(key);
    if (it != partitions_.end() && it->second.p.leader_epoch == leader_epoch) {
      it->second.start_at = StartTimestamp();
    }
    return;
  }
  if (response.error_code != 0) {
    Pause(key, leader_epoch,
          fmt::format("{}: leader answered error code {}", label, response.error_code),
          response.error_code);
    return;
  }
  ResetQuickRetries(key, leader_epoch);
  if (response.diverging_epoch) {
    // KIP-320: keep what agrees with the leader's epoch history.
    const auto& d = *response.diverging_epoch;
    // Our end of the largest epoch <= the leader's (ours may be smaller:
    // the next fetch then compares again, from there).
    auto [local_epoch, local_end] = replica->EndOffsetForEpoch(LeaderEpoch(d.epoch));
    Offset to = std::min(Offset(d.end_offset),
                         local_epoch == kNoLeaderEpoch ? replica->log_end_offset() : local_end);
    Log()->info("{}: {} diverges from the leader at epoch {} (leader's end {}); truncating to {}",
                name_, label, d.epoch, d.end_offset, to);
    Status st = replica->TruncateTo(leader_epoch, std::max(to, replica->log_start_offset()));
    truncations_++;
    if (!st.ok()) Pause(key, leader_epoch, label + ": truncating: " + st.error().message);
    return;
  }
  size_t used = 0;
  auto infos = SplitFetched(response.records.view, used);
  if (!infos.ok()) {
    Pause(key, leader_epoch, label + ": " + infos.error().message);
    return;
  }
  // Where the log started before it had to start lower (kNoOffset: it did not).
  Offset start_again = kNoOffset;
  if (!infos->empty() &&
      !StartAtStraddlingBatch(key, leader_epoch, *replica, response.records.view, start_again)) {
    return;
  }
  if (!infos->empty()) {
    Status appended =
        replica->AppendAsFollower(leader_epoch, response.records.view.subspan(0, used), *infos);
    if (!appended.ok()) {
      Pause(key, leader_epoch, label + ": appending: " + appended.error().message);
      return;
    }
    // Its records below that start were deleted on the leader: not served here either.
    if (start_again >= 0_o) {
      Status st = replica->DeleteRecordsBefore(leader_epoch, start_again);
      if (!st.ok())
        Log()->warn("{}: {}: log start back to {}: {}", name_, label, start_again,
                    st.error().message);
    }
    bytes_fetched_ += static_cast<int64_t>(used);
    if (throttled) options_.throttle->Record(static_cast<int64_t>(used));
    FetchedBytes().Add(static_cast<int64_t>(used));
  }
  replica->OnLeaderFetched(leader_epoch, Offset(response.high_watermark),
                           Offset(response.log_start_offset));
}

bool ReplicaFetcher::StartAtStraddlingBatch(const Key& key, LeaderEpoch leader_epoch,
                                            FollowerReplica& replica, ByteView fetched,
                                            Offset& start_again) {
  const Offset end = replica.log_end_offset();
  if (replica.log_start_offset() != end) return true;  // only an empty log
  auto first = protocol::ParseBatchHeader(fetched);
  if (!first.ok() || first->base_offset >= end) return true;
  // The leader's log start is inside this batch (DeleteRecords), and the
  // leader sends batches whole: as Kafka's follower does, start the empty
  // log at the batch's base so it can take it (the log start goes back up
  // once it has).
  Status st = replica.StartLogAt(leader_epoch, first->base_offset);
  if (!st.ok()) {
    Pause(key, leader_epoch,
          fmt::format("{}-{}: starting at the batch at {}: {}", key.first, key.second,
                      first->base_offset, st.error().message));
    return false;
  }
  Log()->info("{}: {}-{} starts at {}, the base of the batch holding its start {}", name_,
              key.first, key.second, first->base_offset, end);
  start_again = end;
  return true;
}

void ReplicaFetcher::ResetQuickRetries(const Key& key, LeaderEpoch leader_epoch) {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(key);
  if (it != partitions_.end() && it->second.p.leader_epoch == leader_epoch) {
    it->second.quick_retries = 0;
  }
}

namespace {

// The leader does not know yet what the metadata says of this partition.
bool LeaderBehindMetadata(int16_t code) {
  using protocol::ErrorCode;
  return code == Code(ErrorCode::kNotLeaderOrFollower) ||
         code == Code(ErrorCode::kUnknownTopicOrPartition) ||
         code == Code(ErrorCode::kLeaderNotAvailable) ||
         code == Code(ErrorCode::kReplicaNotAvailable) ||
         code == Code(ErrorCode::kUnknownLeaderEpoch);
}

}  // namespace

void ReplicaFetcher::Pause(const Key& key, LeaderEpoch leader_epoch, const std::string& why,
                           int16_t error_code) {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(key);
  if (it == partitions_.end() || it->second.p.leader_epoch != leader_epoch) return;
  Entry& e = it->second;
  if (LeaderBehindMetadata(error_code) && e.quick_retries < kQuickRetries &&
      kQuickRetry < options_.backoff) {
    e.quick_retries++;
    e.paused_until = Clock::now() + kQuickRetry;
    return;
  }
  e.paused_until = Clock::now() + options_.backoff;
  Log()->warn("{}: {}; retrying in {} ms", name_, why, options_.backoff.count());
}

}  // namespace strata::replication
