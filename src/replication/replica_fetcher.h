#pragma once
// ReplicaFetcher: one follower fetch loop against one leader broker (Kafka's
// ReplicaFetcherThread). It sends Fetch v12 as a replica (replica_id = this
// broker) for every partition it was given, at each log's end with the last
// fetched leader epoch, and hands what comes back to the replica
// (FollowerReplica, broker::Partition on a broker): the batches to append
// verbatim, the leader's high watermark and log start. A DivergingEpoch answer truncates the log to
// where it agrees with the leader (KIP-320) before fetching on. A partition that errors (stale
// epoch, leader moved, out of range) pauses for the backoff while the others go on; metadata
// changes come in as Add/Remove.
//
// Tiered partitions (KIP-405): a replica does not copy what remote storage
// holds. An empty one, and one the leader answers
// OFFSET_MOVED_TO_TIERED_STORAGE (its log ends below the leader's local
// log), first asks the leader where to start (ListOffsets as a replica:
// the active segment's base with active-segment sync, else the leader's
// local log start as Kafka's follower does), starts its log there and
// fetches on (replica_start.cc).
//
// Thread-safety: Add/Remove/partitions from any thread; the loop runs on a
// thread of its own.
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/offset.h"
#include "net/client.h"
#include "protocol/messages/fetch.h"
#include "replication/fetch_session_client.h"
#include "replication/follower_replica.h"
#include "replication/replication_throttle.h"
#include "storage/log.h"

namespace strata::replication {

struct FetcherOptions {
  NodeId replica_id = kNoNode;               // this broker's node.id
  int32_t max_wait_ms = 500;                 // replica.fetch.wait.max.ms
  int32_t min_bytes = 1;                     // replica.fetch.min.bytes
  int32_t max_bytes = 10485760;              // replica.fetch.response.max.bytes
  int32_t partition_max_bytes = 1048576;     // replica.fetch.max.bytes
  std::chrono::milliseconds backoff{1000};   // replica.fetch.backoff.ms
  std::chrono::milliseconds timeout{30000};  // replica.socket.timeout.ms
  // strata.replica.sync.enable: an empty replica of a tiered partition
  // starts at the leader's active segment.
  bool sync_from_active_segment = true;
  // follower.replication.throttled.rate; null: none.
  std::shared_ptr<ReplicationThrottle> throttle;
  // Set when the leader's inter-broker listener is SSL.
  net::ClientSecurity security;
  // Called on the loop's thread each time the leader could not be reached
  // (connection refused or lost, timeout): a hint that it may be gone.
  std::function<void()> on_unreachable;
};

// A partition this broker follows, as the fetcher needs it.
struct FollowedPartition {
  std::string topic;
  int32_t partition = 0;
  // The leadership followed (Fetch current_leader_epoch); the replica's
  // writes are made under it.
  LeaderEpoch leader_epoch{-1};
  // What the fetches fill; shared so a fetch in flight keeps it valid while
  // the broker drops the replica.
  std::shared_ptr<FollowerReplica> replica;
  bool tiered = false;  // remote.storage.enable (and not compacted)
  // Whether its fetches count against the follower throttle now (named by
  // follower.replication.throttled.replicas and not in the ISR); null: never.
  std::function<bool()> throttled;
};

class ReplicaFetcher {
 public:
  ReplicaFetcher(std::string name, std::string host, uint16_t port, FetcherOptions options);
  ~ReplicaFetcher();  // stops the loop and joins its thread
  ReplicaFetcher(const ReplicaFetcher&) = delete;
  ReplicaFetcher& operator=(const ReplicaFetcher&) = delete;

  // Starts following (or follows a new epoch of) a partition.
  void Add(FollowedPartition partition);
  void Remove(const std::string& topic, int32_t partition);
  size_t partitions() const;
  const std::string& host() const { return host_; }
  uint16_t port() const { return port_; }

  // Counters for metrics and tests.
  int64_t bytes_fetched() const { return bytes_fetched_.load(); }
  int64_t truncations() const { return truncations_.load(); }
  // Logs started over at a point the leader gave (tiered partitions).
  int64_t log_starts() const { return log_starts_.load(); }

 private:
  struct Entry {
    FollowedPartition p;
    std::chrono::steady_clock::time_point paused_until{};
    // The log must start where the leader says before fetching: the
    // ListOffsets timestamp to ask with, 0 when it need not.
    int64_t start_at = 0;
    // Quick retries spent since the last answer that was not an error (see
    // Pause).
    int quick_retries = 0;
  };
  using Key = std::pair<std::string, int32_t>;

  asio::awaitable<void> Run();
  // One Fetch round trip over the partitions not paused; false when the
  // leader could not be reached (the whole fetcher backs off).
  asio::awaitable<bool> FetchOnce();
  // Asks the leader where the logs of entries with start_at should start
  // and starts them there (replica_start.cc); false when the leader could
  // not be reached.
  asio::awaitable<bool> StartLogs();
  // One request to the leader; a failure is logged as `what` failing and
  // reported to on_unreachable, and gives nullopt.
  asio::awaitable<std::optional<net::Response>> CallLeader(
      int16_t api_key, int16_t version, Bytes body, std::chrono::steady_clock::time_point deadline,
      const char* what);
  // `leader_epoch_at`: the epoch of the leader's records at `offset`.
  void ApplyStart(const Key& key, LeaderEpoch leader_epoch, int16_t error_code, Offset offset,
                  LeaderEpoch leader_epoch_at);
  // The ListOffsets timestamp a tiered partition's log starts from.
  int64_t StartTimestamp() const;
  // Applies one partition's part of a response.
  void Apply(const Key& key, LeaderEpoch leader_epoch, bool throttled,
             protocol::FetchResponse::Partition& response);
  // The partitions whose fetches count against the follower throttle; with
  // `holding`, the throttle is exceeded and they are left out of this round.
  std::set<Key> ThrottledPartitions(bool& holding);
  // Holds the partition back for the backoff. An error that says the
  // leader has not yet learnt of this replica or of its leadership (a new
  // replica asks before the metadata reaches its leader) is retried after
  // kQuickRetry instead, kQuickRetries times, without a log line: moves and
  // new topics then wait a watch delivery, not a whole backoff.
  void Pause(const Key& key, LeaderEpoch leader_epoch, const std::string& why,
             int16_t error_code = 0);
  void ResetQuickRetries(const Key& key, LeaderEpoch leader_epoch);
  // An empty log whose end is inside the first fetched batch (the leader's
  // log start fell inside it) starts again at the batch's base, and
  // `start_again` is set to its old start; false when that failed (the
  // partition is paused).
  bool StartAtStraddlingBatch(const Key& key, LeaderEpoch leader_epoch, FollowerReplica& replica,
                              ByteView fetched, Offset& start_again);
  static constexpr std::chrono::milliseconds kQuickRetry{100};
  static constexpr int kQuickRetries = 20;

  const std::string name_;
  const std::string host_;
  const uint16_t port_;
  const FetcherOptions options_;
  asio::io_context io_;
  asio::steady_timer backoff_timer_{io_};  // Run's wait between rounds
  std::unique_ptr<net::Client> client_;
  mutable std::mutex mu_;
  std::map<Key, Entry> partitions_;
  FetchSessionClient session_;  // used by the fetch loop only
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> bytes_fetched_{0};
  std::atomic<int64_t> truncations_{0};
  std::atomic<int64_t> log_starts_{0};
  std::thread thread_;
};

}  // namespace strata::replication
