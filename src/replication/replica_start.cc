// ReplicaFetcher's log starts for tiered partitions: where a replica that
// should not copy what remote storage holds starts its log. It asks the
// leader with ListOffsets as a replica (replica id set): Strata's
// ACTIVE_SEGMENT_BASE (-1000) with active-segment sync, Kafka's
// EARLIEST_LOCAL (-4) without, and empties its log to start there. What it
// skips is in remote storage, or will be once the leader's uploads reach
// it; until then the leader keeps it out of the ISR and the controller
// never elects it (PartitionRecord::non_contiguous).
#include <fmt/format.h>

#include "protocol/error_code.h"
#include "protocol/messages/list_offsets.h"
#include "replication/logger.h"
#include "replication/replica_fetcher.h"

namespace strata::replication {

namespace {

using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;

constexpr int16_t kListOffsetsVersion = 9;  // flexible; replica id in the body
constexpr int64_t kEarliestLocal = -4;
constexpr int64_t kActiveSegmentBase = -1000;

}  // namespace

int64_t ReplicaFetcher::StartTimestamp() const {
  return options_.sync_from_active_segment ? kActiveSegmentBase : kEarliestLocal;
}

asio::awaitable<bool> ReplicaFetcher::StartLogs() {
  ListOffsetsRequest req;
  req.replica_id = options_.replica_id.value();
  std::map<Key, LeaderEpoch> epochs;
  {
    std::lock_guard lock(mu_);
    auto now = std::chrono::steady_clock::now();
    for (auto& [key, e] : partitions_) {
      if (e.start_at == 0 || e.paused_until > now) continue;
      if (req.topics.empty() || req.topics.back().name != key.first) {
        req.topics.push_back({key.first, {}});
      }
      ListOffsetsRequest::Partition p;
      p.partition_index = key.second;
      p.current_leader_epoch = e.p.leader_epoch.value();
      p.timestamp = e.start_at;
      req.topics.back().partitions.push_back(p);
      epochs[key] = e.p.leader_epoch;
    }
  }
  if (epochs.empty()) co_return true;
  Bytes body;
  protocol::Encode(req, kListOffsetsVersion, /*flexible=*/true, body);
  auto response = co_await CallLeader(
      ListOffsetsRequest::kApiKey, kListOffsetsVersion, std::move(body),
      std::chrono::steady_clock::now() + options_.timeout, "asking where to start");
  if (!response) co_return false;
  auto decoded = protocol::Decode<ListOffsetsResponse>(response->body(), kListOffsetsVersion, true);
  if (!decoded.ok()) {
    Log()->warn("{}: unreadable ListOffsets response from {}:{}: {}", name_, host_, port_,
                decoded.error().message);
    co_return false;
  }
  for (const auto& topic : decoded->topics) {
    for (const auto& p : topic.partitions) {
      Key key{topic.name, p.partition_index};
      auto epoch = epochs.find(key);
      if (epoch != epochs.end()) {
        ApplyStart(key, epoch->second, p.error_code, Offset(p.offset), LeaderEpoch(p.leader_epoch));
      }
    }
  }
  co_return true;
}

void ReplicaFetcher::ApplyStart(const Key& key, LeaderEpoch leader_epoch, int16_t error_code,
                                Offset offset, LeaderEpoch leader_epoch_at) {
  std::shared_ptr<FollowerReplica> replica;
  {
    std::lock_guard lock(mu_);
    auto it = partitions_.find(key);
    if (it == partitions_.end() || it->second.p.leader_epoch != leader_epoch) return;
    replica = it->second.p.replica;
  }
  const std::string label = fmt::format("{}-{}", key.first, key.second);
  if (error_code != 0 || offset < 0_o) {
    Pause(
        key, leader_epoch,
        fmt::format("{}: the leader did not say where to start (error code {})", label, error_code),
        error_code);
    return;
  }
  const Offset end = replica->log_end_offset();
  if (offset > end) {
    Status st = replica->StartLogAt(leader_epoch, offset, leader_epoch_at);
    if (!st.ok()) {
      Pause(key, leader_epoch, label + ": starting the log: " + st.error().message);
      return;
    }
    log_starts_++;
    Log()->info(
        "{}: {} starts at offset {} as its leader says (it ended at {}); the offsets "
        "below are in remote storage or on their way there",
        name_, label, offset, end);
  }
  std::lock_guard lock(mu_);
  auto it = partitions_.find(key);
  if (it != partitions_.end() && it->second.p.leader_epoch == leader_epoch) {
    it->second.start_at = 0;
    it->second.quick_retries = 0;
  }
}

}  // namespace strata::replication
