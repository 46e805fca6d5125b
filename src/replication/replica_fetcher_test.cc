// ReplicaFetcher and its tiered log starts (replica_start.cc) against a leader played by a real
// net::Server whose handler answers Fetch v12 and ListOffsets v9 from real logs on disk.
#include "replication/replica_fetcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/io_context_pool.h"
#include "net/server.h"
#include "protocol/error_code.h"
#include "protocol/header.h"
#include "protocol/message.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/request_registry.h"
#include "storage/log.h"
#include "storage/test_util.h"

namespace strata::replication {
namespace {

using namespace std::chrono_literals;
using protocol::Code;
using protocol::ErrorCode;
using protocol::FetchRequest;
using protocol::FetchResponse;
using protocol::ListOffsetsRequest;
using protocol::ListOffsetsResponse;
using SteadyClock = std::chrono::steady_clock;
using Key = std::pair<std::string, int32_t>;

constexpr int16_t kFetchVersion = 12;
constexpr int16_t kListOffsetsVersion = 9;
constexpr int64_t kEarliestLocal = -4;
constexpr int64_t kActiveSegmentBase = -1000;
constexpr int32_t kReplicaId = 2;
const std::string kTopic = "t";
const Key kP0{kTopic, 0};
const Key kP1{kTopic, 1};

// Waits until `pred` holds; false if it does not within `timeout`.
template <typename P>
bool Eventually(P pred, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = SteadyClock::now() + timeout;
  while (!pred()) {
    if (SteadyClock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// --- Logs ---

// Appends `batches` batches of `records` records each, as a leader at `epoch`.
void Produce(storage::Log& log, int batches, int records, int32_t epoch, uint8_t fill = 'v') {
  for (int i = 0; i < batches; ++i) {
    auto appended = storage::testing::AppendOne(log, {.records = records, .fill = fill}, epoch);
    ASSERT_TRUE(appended.ok()) << appended.error().message;
  }
}

// The batches of `log` in [from, to) as stored (to = kNoOffset: its end).
Bytes Stored(const storage::Log& log, Offset from, Offset to = kNoOffset) {
  if (to < 0_o) to = log.log_end_offset();
  Bytes out;
  for (Offset offset = from; offset < to;) {
    auto read = log.Read(offset, 1 << 20, to, /*min_one_batch=*/true);
    EXPECT_TRUE(read.ok()) << read.error().message;
    if (!read.ok() || read->records.empty()) break;
    offset = storage::testing::Headers(read->records).back().last_offset() + 1;
    out.insert(out.end(), read->records.begin(), read->records.end());
  }
  return out;
}

// A follower's append done by hand: the batches of `from` in [begin, end), verbatim.
void Copy(const storage::Log& from, storage::Log& to, Offset begin, Offset end) {
  Bytes data = Stored(from, begin, end);
  std::vector<storage::BatchInfo> infos;
  size_t pos = 0;
  for (const auto& h : storage::testing::Headers(data)) {
    const auto size = static_cast<size_t>(h.size_in_bytes());
    infos.push_back(storage::testing::InfoFor(ByteView(data).subspan(pos, size)));
    pos += size;
  }
  auto appended = to.AppendAsFollower(MutableByteView(data), infos);
  ASSERT_TRUE(appended.ok()) << appended.error().message;
}

// The leader epoch of the records at `offset`.
int32_t EpochAt(const storage::Log& log, Offset offset) {
  int32_t epoch = -1;
  for (const auto& [e, start] : log.LeaderEpochEntries()) {
    if (start > offset) break;
    epoch = e.value();
  }
  return epoch;
}

// --- The leader ---

// One partition as the leader holds it; tests change it through TestLeader::Update.
struct LeaderPartition {
  std::shared_ptr<storage::Log> log;
  int32_t epoch = 1;                  // its leadership: fetches at another epoch are fenced
  int16_t error = 0;                  // answered to every fetch while set
  Offset high_watermark = kNoOffset;  // kNoOffset: the log end
  Offset remote_start = kNoOffset;    // log start with remote storage; kNoOffset: the local log's
};

// One partition of one request, as the leader saw and answered it.
struct Asked {
  int16_t api_key = 0;
  int32_t replica_id = -1;
  int32_t current_leader_epoch = -1;
  Offset fetch_offset = kNoOffset;  // a Fetch's fetch offset
  int64_t timestamp = -1;           // a ListOffsets's timestamp
  int16_t error = 0;
  bool records = false;
  std::optional<FetchResponse::EpochEndOffset> diverging;
  SteadyClock::time_point received, answered;
};

// Kafka's check of a request's current_leader_epoch.
int16_t Fenced(int32_t leader_epoch, int32_t current) {
  if (current >= 0 && current < leader_epoch) return Code(ErrorCode::kFencedLeaderEpoch);
  if (current > leader_epoch) return Code(ErrorCode::kUnknownLeaderEpoch);
  return 0;
}

// KIP-320 on the leader: the follower's last fetched epoch must be one the leader has, ending at
// or above the fetch offset; else the leader's largest epoch below it and that epoch's end.
std::optional<FetchResponse::EpochEndOffset> Divergence(const storage::Log& log,
                                                        const FetchRequest::Partition& in) {
  if (in.last_fetched_epoch < 0) return std::nullopt;
  const LeaderEpoch last_fetched(in.last_fetched_epoch);
  auto [epoch, end] = log.EndOffsetForEpoch(last_fetched);
  if (epoch == last_fetched && end >= Offset(in.fetch_offset)) return std::nullopt;
  return FetchResponse::EpochEndOffset{epoch.value(), end.value()};
}

// Answers a replica's Fetch and ListOffsets as Kafka's leader does, and records what it was asked.
class TestLeader : public net::RequestHandler {
 public:
  bool IsFlexibleRequest(int16_t key, int16_t version) const override {
    return protocol::RequestIsFlexible(key, version);
  }

  asio::awaitable<Result<std::optional<Bytes>>> Handle(net::Request& request) override {
    const auto received = SteadyClock::now();
    const protocol::RequestHeader& h = request.header;
    Bytes out;
    protocol::WriteResponseHeader(out, h.correlation_id, /*flexible_header=*/true);
    if (h.api_key == FetchRequest::kApiKey && h.api_version == kFetchVersion) {
      auto req = protocol::Decode<FetchRequest>(request.body, kFetchVersion, true);
      if (!req.ok()) co_return req.take_error();
      co_await AnswerFetch(*req, received, out);
    } else if (h.api_key == ListOffsetsRequest::kApiKey && h.api_version == kListOffsetsVersion) {
      auto req = protocol::Decode<ListOffsetsRequest>(request.body, kListOffsetsVersion, true);
      if (!req.ok()) co_return req.take_error();
      AnswerListOffsets(*req, received, out);
    } else {
      co_return MakeError(Errc::kInvalidArgument, "unexpected request");
    }
    co_return std::optional<Bytes>(std::move(out));
  }

  void Lead(const Key& key, std::shared_ptr<storage::Log> log, int32_t epoch) {
    std::lock_guard lock(mu_);
    partitions_[key] = LeaderPartition{.log = std::move(log), .epoch = epoch};
  }
  template <class F>
  void Update(const Key& key, F change) {
    std::lock_guard lock(mu_);
    change(partitions_.at(key));
  }
  std::vector<Asked> AskedOf(const Key& key) const {
    std::lock_guard lock(mu_);
    auto it = asked_.find(key);
    return it == asked_.end() ? std::vector<Asked>{} : it->second;
  }
  int fetches() const { return fetches_.load(); }
  void Clear() {
    std::lock_guard lock(mu_);
    partitions_.clear();
  }

 private:
  using Seen = std::vector<std::pair<Key, Asked>>;

  // Kafka's long poll: answered at once when a partition has records, an error or a divergence,
  // else once max_wait_ms has passed.
  asio::awaitable<void> AnswerFetch(const FetchRequest& req, SteadyClock::time_point received,
                                    Bytes& out) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    const auto deadline = received + std::chrono::milliseconds(req.max_wait_ms);
    for (;;) {
      Seen seen;
      FetchResponse resp = ReadAll(req, received, seen);
      bool now = false;
      for (const auto& [key, a] : seen) now |= a.error != 0 || a.records || a.diverging;
      if (now || SteadyClock::now() >= deadline) {
        protocol::Encode(resp, kFetchVersion, true, out);
        Record(std::move(seen));
        fetches_++;
        co_return;
      }
      timer.expires_after(5ms);
      co_await timer.async_wait(asio::use_awaitable);
    }
  }

  FetchResponse ReadAll(const FetchRequest& req, SteadyClock::time_point received, Seen& seen) {
    FetchResponse resp;
    // Reserved: a moved RecordsField would still point into its old buffer.
    resp.responses.reserve(req.topics.size());
    for (const auto& topic : req.topics) {
      auto& out_topic = resp.responses.emplace_back();
      out_topic.topic = topic.topic;
      out_topic.partitions.reserve(topic.partitions.size());
      for (const auto& in : topic.partitions) {
        auto& out = out_topic.partitions.emplace_back();
        ReadPartition(topic.topic, in, out);
        seen.push_back({{topic.topic, in.partition},
                        {.api_key = FetchRequest::kApiKey,
                         .replica_id = req.replica_id,
                         .current_leader_epoch = in.current_leader_epoch,
                         .fetch_offset = Offset(in.fetch_offset),
                         .error = out.error_code,
                         .records = !out.records.view.empty(),
                         .diverging = out.diverging_epoch,
                         .received = received}});
      }
    }
    return resp;
  }

  void ReadPartition(const std::string& topic, const FetchRequest::Partition& in,
                     FetchResponse::Partition& out) {
    out.partition_index = in.partition;
    std::lock_guard lock(mu_);
    auto it = partitions_.find({topic, in.partition});
    if (it == partitions_.end()) {
      out.error_code = Code(ErrorCode::kUnknownTopicOrPartition);
      return;
    }
    const LeaderPartition& p = it->second;
    out.error_code = p.error != 0 ? p.error : Fenced(p.epoch, in.current_leader_epoch);
    if (out.error_code != 0) return;
    const storage::Log& log = *p.log;
    const Offset end = log.log_end_offset(), local_start = log.log_start_offset();
    const Offset log_start = p.remote_start >= 0_o ? p.remote_start : local_start;
    const Offset fetch_offset(in.fetch_offset);
    out.high_watermark = (p.high_watermark >= 0_o ? p.high_watermark : end).value();
    out.last_stable_offset = out.high_watermark;
    out.log_start_offset = log_start.value();
    out.diverging_epoch = Divergence(log, in);
    if (out.diverging_epoch) return;
    if (fetch_offset < log_start || fetch_offset > end) {
      out.error_code = Code(ErrorCode::kOffsetOutOfRange);
    } else if (fetch_offset < local_start) {
      out.error_code = Code(ErrorCode::kOffsetMovedToTieredStorage);
    } else if (fetch_offset < end) {
      auto read = log.Read(fetch_offset, in.partition_max_bytes, end, /*min_one_batch=*/true);
      if (read.ok()) {
        out.records.Own(std::move(read->records));
      } else {
        out.error_code = Code(ErrorCode::kUnknownServerError);
      }
    }
  }

  void AnswerListOffsets(const ListOffsetsRequest& req, SteadyClock::time_point received,
                         Bytes& out) {
    ListOffsetsResponse resp;
    Seen seen;
    for (const auto& topic : req.topics) {
      auto& out_topic = resp.topics.emplace_back();
      out_topic.name = topic.name;
      for (const auto& in : topic.partitions) {
        auto& answer = out_topic.partitions.emplace_back();
        StartOf(topic.name, in, answer);
        seen.push_back({{topic.name, in.partition_index},
                        {.api_key = ListOffsetsRequest::kApiKey,
                         .replica_id = req.replica_id,
                         .current_leader_epoch = in.current_leader_epoch,
                         .timestamp = in.timestamp,
                         .error = answer.error_code,
                         .received = received}});
      }
    }
    protocol::Encode(resp, kListOffsetsVersion, true, out);
    Record(std::move(seen));
  }

  // Where a replica of a tiered partition starts, with the epoch of the records there.
  void StartOf(const std::string& topic, const ListOffsetsRequest::Partition& in,
               ListOffsetsResponse::Partition& out) {
    out.partition_index = in.partition_index;
    std::lock_guard lock(mu_);
    auto it = partitions_.find({topic, in.partition_index});
    if (it == partitions_.end()) {
      out.error_code = Code(ErrorCode::kUnknownTopicOrPartition);
      return;
    }
    out.error_code = Fenced(it->second.epoch, in.current_leader_epoch);
    if (out.error_code != 0) return;
    const storage::Log& log = *it->second.log;
    Offset start;
    if (in.timestamp == kActiveSegmentBase) {
      start = log.active_segment_base_offset();
    } else if (in.timestamp == kEarliestLocal) {
      start = log.log_start_offset();
    } else {
      out.error_code = Code(ErrorCode::kInvalidRequest);  // a replica asks nothing else
      return;
    }
    out.offset = start.value();
    out.timestamp = -1;
    out.leader_epoch = EpochAt(log, start);
  }

  void Record(Seen seen) {
    const auto now = SteadyClock::now();
    std::lock_guard lock(mu_);
    for (auto& [key, a] : seen) {
      a.answered = now;
      asked_[key].push_back(std::move(a));
    }
  }

  mutable std::mutex mu_;
  std::map<Key, LeaderPartition> partitions_;
  std::map<Key, std::vector<Asked>> asked_;
  std::atomic<int> fetches_{0};
};

// The leader's listener: a real net::Server on 127.0.0.1 (`port` 0: any free one) with threads of
// its own. Destroying it closes its connections.
class LeaderServer {
 public:
  LeaderServer(net::RequestHandler& handler, uint16_t port) : pool_(1) {
    net::ServerOptions options;
    options.port = port;
    server_ = std::make_unique<net::Server>(io_, pool_, options, handler);
    Status started = server_->Start();
    EXPECT_TRUE(started.ok()) << started.error().message;
    pool_.Start("test-leader");
    thread_ = std::thread([this] { io_.run(); });
  }
  ~LeaderServer() {
    server_->Stop();
    work_.reset();
    io_.stop();
    thread_.join();
    pool_.Stop();
    pool_.Join();
  }
  uint16_t port() const { return server_->bound_port(); }

 private:
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      asio::make_work_guard(io_)};
  net::IoContextPool pool_;
  std::unique_ptr<net::Server> server_;
  std::thread thread_;
};

// --- The follower ---

// The replica a test follows: a real log, and a record of what the fetcher
// did to it (called on the fetcher's thread). It follows one leadership;
// `Lead` makes it refuse the fetcher's writes from then on, as
// broker::Partition does once it leads.
class LogReplica : public FollowerReplica {
 public:
  LogReplica(std::shared_ptr<storage::Log> log, int32_t epoch)
      : log_(std::move(log)), epoch_(epoch) {}

  Offset log_end_offset() const override { return log_->log_end_offset(); }
  Offset log_start_offset() const override { return log_->log_start_offset(); }
  LeaderEpoch latest_epoch() const override { return log_->latest_epoch(); }
  std::pair<LeaderEpoch, Offset> EndOffsetForEpoch(LeaderEpoch epoch) const override {
    return log_->EndOffsetForEpoch(epoch);
  }
  Status AppendAsFollower(LeaderEpoch under, MutableByteView batches,
                          const std::vector<storage::BatchInfo>& infos) override {
    std::lock_guard lock(mu_);
    STRATA_RETURN_IF_ERROR(Following(under));
    auto appended = log_->AppendAsFollower(batches, infos);
    if (!appended.ok()) return appended.take_error();
    appended_ += static_cast<int64_t>(batches.size());
    return Status::Ok();
  }
  Status TruncateTo(LeaderEpoch under, Offset offset) override {
    std::lock_guard lock(mu_);
    STRATA_RETURN_IF_ERROR(Following(under));
    Status st = log_->TruncateTo(offset);
    truncated_.push_back(log_->log_end_offset());
    return st;
  }
  Status StartLogAt(LeaderEpoch under, Offset offset, LeaderEpoch epoch_at) override {
    std::lock_guard lock(mu_);
    STRATA_RETURN_IF_ERROR(Following(under));
    started_.push_back(offset);
    return log_->TruncateFullyAndStartAt(offset, epoch_at);
  }
  Status DeleteRecordsBefore(LeaderEpoch under, Offset offset) override {
    std::lock_guard lock(mu_);
    STRATA_RETURN_IF_ERROR(Following(under));
    return log_->DeleteRecordsBefore(offset);
  }
  void OnLeaderFetched(LeaderEpoch under, Offset high_watermark, Offset log_start) override {
    std::lock_guard lock(mu_);
    if (!Following(under).ok()) return;
    high_watermark_ = high_watermark;
    log_start_ = log_start;
  }

  // From now on this replica leads: the fetcher's writes are refused.
  void Lead() {
    std::lock_guard lock(mu_);
    leads_ = true;
  }
  Offset high_watermark() const {
    std::lock_guard lock(mu_);
    return high_watermark_;
  }
  Offset log_start() const {
    std::lock_guard lock(mu_);
    return log_start_;
  }
  int64_t appended() const {
    std::lock_guard lock(mu_);
    return appended_;
  }
  // The log end after each TruncateTo.
  std::vector<Offset> truncated() const {
    std::lock_guard lock(mu_);
    return truncated_;
  }
  // The offset of each StartLogAt.
  std::vector<Offset> started() const {
    std::lock_guard lock(mu_);
    return started_;
  }

 private:
  Status Following(LeaderEpoch under) const {
    if (leads_ || under.value() != epoch_) return MakeError(Errc::kFenced, "not following");
    return Status::Ok();
  }

  const std::shared_ptr<storage::Log> log_;
  const int32_t epoch_;
  mutable std::mutex mu_;
  bool leads_ = false;
  Offset high_watermark_ = kNoOffset;
  Offset log_start_ = kNoOffset;
  int64_t appended_ = 0;
  std::vector<Offset> truncated_;
  std::vector<Offset> started_;
};

FollowedPartition Follow(int32_t partition, const std::shared_ptr<LogReplica>& replica,
                         int32_t epoch, bool tiered = false) {
  return {.topic = kTopic,
          .partition = partition,
          .leader_epoch = LeaderEpoch(epoch),
          .replica = replica,
          .tiered = tiered};
}

// Small waits and backoffs: a test's rounds take milliseconds.
FetcherOptions Fast() {
  FetcherOptions o;
  o.replica_id = NodeId(kReplicaId);
  o.max_wait_ms = 20;
  o.backoff = 100ms;
  o.timeout = 5s;
  return o;
}

int Errors(const std::vector<Asked>& asked, int16_t code) {
  return static_cast<int>(
      std::count_if(asked.begin(), asked.end(), [&](const Asked& a) { return a.error == code; }));
}

class ReplicaFetcherTest : public storage::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    StartServer(0);
  }
  void TearDown() override {
    server_.reset();
    leader_.Clear();
    TempDirTest::TearDown();
  }
  void StartServer(uint16_t port) {
    server_ = std::make_unique<LeaderServer>(leader_, port);
    port_ = server_->port();
  }
  std::shared_ptr<storage::Log> NewLog(const std::string& name) {
    auto log = storage::Log::Open(root_ / name, config_, &clock_);
    EXPECT_TRUE(log.ok()) << log.error().message;
    return log.ok() ? std::shared_ptr<storage::Log>(std::move(*log)) : nullptr;
  }
  std::shared_ptr<storage::Log> NewLeader(int32_t partition, int32_t epoch) {
    auto log = NewLog("leader-" + std::to_string(partition));
    leader_.Lead({kTopic, partition}, log, epoch);
    return log;
  }
  // A tiered leader at epoch 2: 0..19 at epoch 1 in a rolled segment, 20..29 at epoch 2 in the
  // active one, its local log starting at `local_start` (remote storage holds the rest).
  std::shared_ptr<storage::Log> NewTieredLeader(Offset local_start) {
    auto leader = NewLeader(0, 2);
    Produce(*leader, 4, 5, 1);
    EXPECT_TRUE(leader->Roll().ok());
    Produce(*leader, 2, 5, 2, 'w');
    EXPECT_TRUE(leader->DeleteRecordsBefore(local_start).ok());
    leader_.Update(kP0, [](LeaderPartition& p) { p.remote_start = 0_o; });
    return leader;
  }
  std::unique_ptr<ReplicaFetcher> StartFetcher(const FetcherOptions& options = Fast()) {
    return std::make_unique<ReplicaFetcher>("test-fetcher", "127.0.0.1", port_, options);
  }

  storage::LogConfig config_;
  ManualClock clock_{1'700'000'000'000};
  TestLeader leader_;
  std::unique_ptr<LeaderServer> server_;
  uint16_t port_ = 0;
};

TEST_F(ReplicaFetcherTest, AnEmptyFollowerCopiesTheLeaderByteForByte) {
  config_.segment_bytes = 1024;  // several segments on both sides
  auto leader = NewLeader(0, 3);
  Produce(*leader, 6, 3, 1);
  Produce(*leader, 4, 2, 3, 'w');  // 0..25
  leader_.Update(kP0, [](LeaderPartition& p) { p.high_watermark = 20_o; });
  auto follower = NewLog("follower-0");
  auto seen = std::make_shared<LogReplica>(follower, 3);
  FetcherOptions options = Fast();
  options.partition_max_bytes = 400;  // a few batches a round
  auto fetcher = StartFetcher(options);
  fetcher->Add(Follow(0, seen, 3));

  const Bytes all = Stored(*leader, 0_o);
  // The fetcher counts the bytes and takes the leader's mark just after the
  // append of the round returns: wait for all three.
  ASSERT_TRUE(Eventually([&] {
    return seen->appended() == static_cast<int64_t>(all.size()) &&
           fetcher->bytes_fetched() == static_cast<int64_t>(all.size()) &&
           seen->high_watermark() == 20_o;
  })) << "appended "
      << seen->appended() << " of " << all.size() << " bytes, fetched " << fetcher->bytes_fetched()
      << ", high watermark " << seen->high_watermark();
  EXPECT_EQ(follower->log_end_offset(), 26_o);
  EXPECT_EQ(Stored(*follower, 0_o), all);
  EXPECT_EQ(follower->LeaderEpochEntries(), leader->LeaderEpochEntries());
  EXPECT_EQ(seen->high_watermark(), 20_o);
  EXPECT_EQ(seen->log_start(), 0_o);
  EXPECT_EQ(fetcher->bytes_fetched(), static_cast<int64_t>(all.size()));
  EXPECT_EQ(fetcher->truncations(), 0);
  EXPECT_EQ(fetcher->log_starts(), 0);
  EXPECT_EQ(fetcher->partitions(), 1u);
  // As replica 2 at the leader's epoch, each round from where the last one ended.
  int rounds_with_records = 0;
  Offset offset = 0_o;
  for (const Asked& a : leader_.AskedOf(kP0)) {
    EXPECT_EQ(a.api_key, FetchRequest::kApiKey);
    EXPECT_EQ(a.replica_id, kReplicaId);
    EXPECT_EQ(a.current_leader_epoch, 3);
    EXPECT_GE(a.fetch_offset, offset);
    offset = a.fetch_offset;
    rounds_with_records += a.records;
  }
  EXPECT_GT(rounds_with_records, 1);
}

TEST_F(ReplicaFetcherTest, ATailAtAnOlderEpochIsTruncatedToWhereTheLeaderAgrees) {
  auto leader = NewLeader(0, 2);
  Produce(*leader, 2, 5, 1);       // 0..9 at epoch 1
  Produce(*leader, 2, 5, 2, 'w');  // 10..19 at epoch 2
  auto follower = NewLog("follower-0");
  Copy(*leader, *follower, 0_o, 10_o);
  Produce(*follower, 1, 5, 1, 'x');  // 10..14 at epoch 1: never the leader's
  auto seen = std::make_shared<LogReplica>(follower, 2);
  auto fetcher = StartFetcher();
  fetcher->Add(Follow(0, seen, 2));

  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 20_o; }))
      << "the follower ends at " << follower->log_end_offset();
  EXPECT_EQ(Stored(*follower, 0_o), Stored(*leader, 0_o));
  EXPECT_EQ(follower->LeaderEpochEntries(), leader->LeaderEpochEntries());
  EXPECT_EQ(fetcher->truncations(), 1);
  EXPECT_EQ(seen->truncated(), std::vector<Offset>{10_o});
  // The leader's answer to the fetch at 15 with last epoch 1: epoch 1 ends at 10.
  std::vector<FetchResponse::EpochEndOffset> diverged;
  for (const Asked& a : leader_.AskedOf(kP0)) {
    if (a.diverging) diverged.push_back(*a.diverging);
  }
  EXPECT_EQ(diverged, (std::vector<FetchResponse::EpochEndOffset>{{1, 10}}));
}

TEST_F(ReplicaFetcherTest, AnEpochTheLeaderNeverHadIsTruncatedInRounds) {
  auto leader = NewLeader(0, 4);
  Produce(*leader, 2, 4, 1);       // 0..7 at epoch 1
  Produce(*leader, 1, 4, 2, 'w');  // 8..11 at epoch 2
  Produce(*leader, 2, 4, 4, 'y');  // 12..19 at epoch 4
  auto follower = NewLog("follower-0");
  Copy(*leader, *follower, 0_o, 8_o);
  Produce(*follower, 1, 2, 1, 'x');  // 8..9 at epoch 1
  Produce(*follower, 1, 5, 3, 'z');  // 10..14 at epoch 3, which the leader never had
  auto seen = std::make_shared<LogReplica>(follower, 4);
  auto fetcher = StartFetcher();
  fetcher->Add(Follow(0, seen, 4));

  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 20_o; }))
      << "the follower ends at " << follower->log_end_offset();
  EXPECT_EQ(Stored(*follower, 0_o), Stored(*leader, 0_o));
  EXPECT_EQ(follower->LeaderEpochEntries(), leader->LeaderEpochEntries());
  // Epoch 3 -> the leader's epoch 2 ends at 12, ours (as epoch 1) at 10; then epoch 1 ends at 8.
  EXPECT_EQ(fetcher->truncations(), 2);
  EXPECT_EQ(seen->truncated(), (std::vector<Offset>{10_o, 8_o}));
}

TEST_F(ReplicaFetcherTest, APartitionThatErrsWaitsTheBackoffWhileTheOthersGoOn) {
  auto leader0 = NewLeader(0, 1);
  Produce(*leader0, 10, 2, 1);
  auto leader1 = NewLeader(1, 1);
  Produce(*leader1, 2, 2, 1);
  const int16_t fenced = Code(ErrorCode::kFencedLeaderEpoch);
  leader_.Update(kP1, [&](LeaderPartition& p) { p.error = fenced; });
  auto follower0 = NewLog("follower-0"), follower1 = NewLog("follower-1");
  FetcherOptions options = Fast();
  options.backoff = 1s;
  options.partition_max_bytes = 1;  // one batch a round
  auto fetcher = StartFetcher(options);
  fetcher->Add(Follow(1, std::make_shared<LogReplica>(follower1, 1), 1));
  fetcher->Add(Follow(0, std::make_shared<LogReplica>(follower0, 1), 1));

  ASSERT_TRUE(Eventually([&] { return Errors(leader_.AskedOf(kP1), fenced) >= 1; }));
  leader_.Update(kP1, [](LeaderPartition& p) { p.error = 0; });
  ASSERT_TRUE(Eventually([&] { return follower1->log_end_offset() == 4_o; }));
  const auto asked1 = leader_.AskedOf(kP1);
  ASSERT_GE(asked1.size(), 2u);
  const auto paused_from = asked1[0].answered, paused_to = asked1[1].received;
  EXPECT_GE(paused_to - paused_from, options.backoff);
  // Partition 0 was fetched meanwhile, a batch a round (its first may have come with the error).
  int copied_meanwhile = 0;
  for (const Asked& a : leader_.AskedOf(kP0)) {
    copied_meanwhile += a.records && a.received > paused_from && a.received < paused_to;
  }
  EXPECT_GE(copied_meanwhile, 9);
  ASSERT_TRUE(Eventually([&] { return follower0->log_end_offset() == 20_o; }));
  EXPECT_EQ(Stored(*follower0, 0_o), Stored(*leader0, 0_o));
  EXPECT_EQ(Stored(*follower1, 0_o), Stored(*leader1, 0_o));
}

TEST_F(ReplicaFetcherTest, ALeaderThatHasNotLearntItsLeadershipIsAskedAgainSoon) {
  auto leader = NewLeader(0, 1);
  Produce(*leader, 2, 2, 1);
  const int16_t not_leader = Code(ErrorCode::kNotLeaderOrFollower);
  leader_.Update(kP0, [&](LeaderPartition& p) { p.error = not_leader; });
  auto follower = NewLog("follower-0");
  FetcherOptions options = Fast();
  options.backoff = 5s;
  auto fetcher = StartFetcher(options);
  fetcher->Add(Follow(0, std::make_shared<LogReplica>(follower, 1), 1));

  ASSERT_TRUE(Eventually([&] { return Errors(leader_.AskedOf(kP0), not_leader) >= 3; }));
  const auto asked = leader_.AskedOf(kP0);
  for (size_t i = 1; i < 3; ++i) {
    const auto waited = asked[i].received - asked[i - 1].answered;
    EXPECT_GE(waited, 100ms);  // ReplicaFetcher::kQuickRetry
    EXPECT_LT(waited, options.backoff);
  }
  leader_.Update(kP0, [](LeaderPartition& p) { p.error = 0; });
  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 4_o; }, 4s));
  EXPECT_EQ(Stored(*follower, 0_o), Stored(*leader, 0_o));
}

TEST_F(ReplicaFetcherTest, AnEmptyTieredReplicaStartsAtTheLeadersActiveSegment) {
  auto leader = NewTieredLeader(0_o);
  auto follower = NewLog("follower-0");
  auto seen = std::make_shared<LogReplica>(follower, 2);
  auto fetcher = StartFetcher();  // sync_from_active_segment
  fetcher->Add(Follow(0, seen, 2, /*tiered=*/true));

  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 30_o; }))
      << "the follower ends at " << follower->log_end_offset();
  const auto asked = leader_.AskedOf(kP0);
  ASSERT_GE(asked.size(), 2u);
  EXPECT_EQ(asked[0].api_key, ListOffsetsRequest::kApiKey);
  EXPECT_EQ(asked[0].timestamp, kActiveSegmentBase);
  EXPECT_EQ(asked[0].replica_id, kReplicaId);
  EXPECT_EQ(asked[0].current_leader_epoch, 2);
  for (size_t i = 1; i < asked.size(); ++i) {
    EXPECT_EQ(asked[i].api_key, FetchRequest::kApiKey);
    EXPECT_GE(asked[i].fetch_offset, 20_o) << "copied what remote storage holds";
  }
  EXPECT_EQ(follower->log_start_offset(), 20_o);
  EXPECT_EQ(fetcher->log_starts(), 1);
  EXPECT_EQ(fetcher->truncations(), 0);
  EXPECT_EQ(seen->started(), std::vector<Offset>{20_o});
  EXPECT_TRUE(seen->truncated().empty());
  EXPECT_EQ(Stored(*follower, 20_o), Stored(*leader, 20_o));
  EXPECT_EQ(follower->LeaderEpochEntries(),
            (std::vector<std::pair<LeaderEpoch, Offset>>{{LeaderEpoch(2), 20_o}}));
}

TEST_F(ReplicaFetcherTest, WithoutActiveSegmentSyncAnEmptyTieredReplicaStartsAtTheLocalLogStart) {
  auto leader = NewTieredLeader(10_o);
  auto follower = NewLog("follower-0");
  auto seen = std::make_shared<LogReplica>(follower, 2);
  FetcherOptions options = Fast();
  options.sync_from_active_segment = false;
  auto fetcher = StartFetcher(options);
  fetcher->Add(Follow(0, seen, 2, /*tiered=*/true));

  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 30_o; }))
      << "the follower ends at " << follower->log_end_offset();
  // As Kafka's follower: a fetch at 0, answered OFFSET_MOVED_TO_TIERED_STORAGE, then
  // EARLIEST_LOCAL.
  const auto asked = leader_.AskedOf(kP0);
  ASSERT_GE(asked.size(), 3u);
  EXPECT_EQ(asked[0].api_key, FetchRequest::kApiKey);
  EXPECT_EQ(asked[0].fetch_offset, 0_o);
  EXPECT_EQ(asked[0].error, Code(ErrorCode::kOffsetMovedToTieredStorage));
  EXPECT_EQ(asked[1].api_key, ListOffsetsRequest::kApiKey);
  EXPECT_EQ(asked[1].timestamp, kEarliestLocal);
  for (size_t i = 2; i < asked.size(); ++i) EXPECT_GE(asked[i].fetch_offset, 10_o);
  EXPECT_EQ(follower->log_start_offset(), 10_o);
  EXPECT_EQ(fetcher->log_starts(), 1);
  EXPECT_EQ(seen->started(), std::vector<Offset>{10_o});
  EXPECT_EQ(Stored(*follower, 10_o), Stored(*leader, 10_o));
  EXPECT_EQ(follower->LeaderEpochEntries(), leader->LeaderEpochEntries());
}

TEST_F(ReplicaFetcherTest, AReplicaBelowTheLeadersLocalLogStartsOverWhereTheLeaderSays) {
  auto leader = NewTieredLeader(10_o);
  auto follower = NewLog("follower-0");
  Produce(*follower, 1, 5, 1);  // 0..4: the leader's remote storage holds these
  auto seen = std::make_shared<LogReplica>(follower, 2);
  auto fetcher = StartFetcher();
  fetcher->Add(Follow(0, seen, 2, /*tiered=*/true));

  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 30_o; }))
      << "the follower ends at " << follower->log_end_offset();
  const auto asked = leader_.AskedOf(kP0);
  ASSERT_GE(asked.size(), 3u);
  EXPECT_EQ(asked[0].api_key, FetchRequest::kApiKey);
  EXPECT_EQ(asked[0].fetch_offset, 5_o);
  EXPECT_EQ(asked[0].error, Code(ErrorCode::kOffsetMovedToTieredStorage));
  EXPECT_EQ(asked[1].api_key, ListOffsetsRequest::kApiKey);
  EXPECT_EQ(asked[1].timestamp, kActiveSegmentBase);
  for (size_t i = 2; i < asked.size(); ++i) EXPECT_GE(asked[i].fetch_offset, 20_o);
  EXPECT_EQ(follower->log_start_offset(), 20_o);
  EXPECT_EQ(fetcher->log_starts(), 1);
  EXPECT_EQ(seen->started(), std::vector<Offset>{20_o});
  EXPECT_TRUE(seen->truncated().empty());
  EXPECT_EQ(Stored(*follower, 20_o), Stored(*leader, 20_o));
}

TEST_F(ReplicaFetcherTest, AFollowerBelowTheLeadersLogStartStartsThere) {
  auto leader = NewLeader(0, 1);
  Produce(*leader, 6, 5, 1);  // 0..29
  auto follower = NewLog("follower-0");
  Copy(*leader, *follower, 0_o, 5_o);
  ASSERT_TRUE(leader->DeleteRecordsBefore(15_o).ok());  // while the follower was away
  auto seen = std::make_shared<LogReplica>(follower, 1);
  auto fetcher = StartFetcher();
  fetcher->Add(Follow(0, seen, 1));

  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 30_o; }))
      << "the follower ends at " << follower->log_end_offset();
  EXPECT_EQ(leader_.AskedOf(kP0).at(0).error, Code(ErrorCode::kOffsetOutOfRange));
  EXPECT_EQ(follower->log_start_offset(), 15_o);
  EXPECT_EQ(Stored(*follower, 15_o), Stored(*leader, 15_o));
  EXPECT_EQ(fetcher->truncations(), 1);
  EXPECT_EQ(fetcher->log_starts(), 0);
  EXPECT_EQ(seen->started(), std::vector<Offset>{15_o});
  ASSERT_TRUE(Eventually([&] { return seen->log_start() == 15_o; }));
}

// DeleteRecords takes any offset, so a leader's log may start inside a batch; a fetch there gets
// the whole batch, which begins below the follower's new log start.
TEST_F(ReplicaFetcherTest, AFollowerBelowALogStartInsideABatchCopiesOn) {
  auto leader = NewLeader(0, 1);
  Produce(*leader, 6, 5, 1);  // 0..29
  auto follower = NewLog("follower-0");
  Copy(*leader, *follower, 0_o, 5_o);
  ASSERT_TRUE(leader->DeleteRecordsBefore(12_o).ok());  // inside the batch 10..14
  auto fetcher = StartFetcher();
  fetcher->Add(Follow(0, std::make_shared<LogReplica>(follower, 1), 1));

  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 30_o; }, 3s))
      << "the follower is stuck at " << follower->log_end_offset() << " (log start "
      << follower->log_start_offset() << ")";
  EXPECT_LE(follower->log_start_offset(), 12_o);
  EXPECT_EQ(Stored(*follower, 15_o), Stored(*leader, 15_o));
}

TEST_F(ReplicaFetcherTest, AnUnreachableLeaderIsReportedAndFollowedAgainWhenBack) {
  auto leader = NewLeader(0, 1);
  Produce(*leader, 2, 5, 1);
  auto follower = NewLog("follower-0");
  std::atomic<int> unreachable{0};
  FetcherOptions options = Fast();
  options.on_unreachable = [&] { ++unreachable; };
  auto fetcher = StartFetcher(options);
  fetcher->Add(Follow(0, std::make_shared<LogReplica>(follower, 1), 1));
  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 10_o; }));
  EXPECT_EQ(unreachable.load(), 0);

  const uint16_t port = port_;
  server_.reset();  // its connection and listener go
  ASSERT_TRUE(Eventually([&] { return unreachable.load() >= 1; }));
  Produce(*leader, 2, 5, 1, 'w');  // 10..19 while it is away
  StartServer(port);
  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 20_o; }))
      << "the follower ends at " << follower->log_end_offset();
  EXPECT_EQ(Stored(*follower, 0_o), Stored(*leader, 0_o));
}

// ReplicaFetchers destroys a leader's fetchers when the leader moves to a new endpoint, that is
// when the old one is likely down, and one by one at shutdown.
TEST_F(ReplicaFetcherTest, AFetcherWhoseLeaderIsDownStopsWithoutWaitingOutTheBackoff) {
  auto follower = NewLog("follower-0");
  std::atomic<int> unreachable{0};
  FetcherOptions options = Fast();
  options.backoff = 3s;
  options.on_unreachable = [&] { ++unreachable; };
  server_.reset();  // nobody listens on port_ now
  auto fetcher = StartFetcher(options);
  fetcher->Add(Follow(0, std::make_shared<LogReplica>(follower, 1), 1));
  ASSERT_TRUE(Eventually([&] { return unreachable.load() >= 1; }));

  const auto start = SteadyClock::now();
  fetcher.reset();
  const auto took = SteadyClock::now() - start;
  EXPECT_LT(took, 1s) << "stopping took "
                      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                      << " ms";
}

TEST_F(ReplicaFetcherTest, ARemovedPartitionIsNoLongerFetched) {
  auto leader0 = NewLeader(0, 1), leader1 = NewLeader(1, 1);
  Produce(*leader0, 2, 5, 1);
  Produce(*leader1, 2, 5, 1);
  auto follower0 = NewLog("follower-0"), follower1 = NewLog("follower-1");
  auto seen0 = std::make_shared<LogReplica>(follower0, 1);
  auto fetcher = StartFetcher();
  fetcher->Add(Follow(0, seen0, 1));
  fetcher->Add(Follow(1, std::make_shared<LogReplica>(follower1, 1), 1));
  ASSERT_TRUE(Eventually(
      [&] { return follower0->log_end_offset() == 10_o && follower1->log_end_offset() == 10_o; }));
  ASSERT_TRUE(Eventually([&] { return seen0->appended() > 0; }));
  const int64_t appended0 = seen0->appended();

  fetcher->Remove(kTopic, 0);
  EXPECT_EQ(fetcher->partitions(), 1u);
  Produce(*leader0, 2, 5, 1, 'w');
  Produce(*leader1, 2, 5, 1, 'w');
  ASSERT_TRUE(Eventually([&] { return follower1->log_end_offset() == 20_o; }));
  // Every round from here was sent after the removal.
  const size_t asked0 = leader_.AskedOf(kP0).size();
  const int rounds = leader_.fetches();
  ASSERT_TRUE(Eventually([&] { return leader_.fetches() >= rounds + 3; }));
  EXPECT_EQ(leader_.AskedOf(kP0).size(), asked0);
  EXPECT_EQ(follower0->log_end_offset(), 10_o);
  EXPECT_EQ(seen0->appended(), appended0);
  EXPECT_EQ(Stored(*follower1, 0_o), Stored(*leader1, 0_o));
}

TEST_F(ReplicaFetcherTest, AddingANewLeaderEpochFollowsItAtOnce) {
  auto leader = NewLeader(0, 1);
  Produce(*leader, 2, 5, 1);
  auto follower = NewLog("follower-0");
  FetcherOptions options = Fast();
  options.backoff = 10s;  // the fenced partition is not retried within the test
  auto fetcher = StartFetcher(options);
  fetcher->Add(Follow(0, std::make_shared<LogReplica>(follower, 1), 1));
  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 10_o; }));

  leader_.Update(kP0, [](LeaderPartition& p) { p.epoch = 2; });
  Produce(*leader, 2, 5, 2, 'w');  // 10..19 at epoch 2
  const int16_t fenced = Code(ErrorCode::kFencedLeaderEpoch);
  ASSERT_TRUE(Eventually([&] { return Errors(leader_.AskedOf(kP0), fenced) >= 1; }));
  const size_t before = leader_.AskedOf(kP0).size();
  fetcher->Add(Follow(0, std::make_shared<LogReplica>(follower, 2), 2));
  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 20_o; }, 5s))
      << "the new epoch waited for the old one's backoff";
  EXPECT_EQ(fetcher->partitions(), 1u);
  EXPECT_EQ(follower->latest_epoch(), LeaderEpoch(2));
  EXPECT_EQ(Stored(*follower, 0_o), Stored(*leader, 0_o));
  const auto asked = leader_.AskedOf(kP0);
  for (size_t i = before; i < asked.size(); ++i) {
    EXPECT_EQ(asked[i].current_leader_epoch, 2);
    EXPECT_EQ(asked[i].error, 0);
  }
}

// An answer that arrives after the replica stopped following the leadership
// it was fetched under (it leads now, and the broker has not yet removed it
// from the fetcher) never reaches its log.
TEST_F(ReplicaFetcherTest, AReplicaThatNoLongerFollowsTakesNoAnswer) {
  auto leader = NewLeader(0, 1);
  Produce(*leader, 2, 5, 1);
  auto follower = NewLog("follower-0");
  auto replica = std::make_shared<LogReplica>(follower, 1);
  replica->Lead();
  auto fetcher = StartFetcher();
  fetcher->Add(Follow(0, replica, 1));
  ASSERT_TRUE(Eventually([&] {
    auto asked = leader_.AskedOf(kP0);
    return std::any_of(asked.begin(), asked.end(), [](const Asked& a) { return a.records; });
  })) << "the leader was never asked";
  EXPECT_EQ(follower->log_end_offset(), 0_o);
  EXPECT_EQ(replica->appended(), 0);
  EXPECT_EQ(replica->high_watermark(), kNoOffset);
  EXPECT_EQ(fetcher->bytes_fetched(), 0);
}

// replica_start.cc: a start the leader refuses (the follower asked under an
// older leadership) leaves the log as it is; asked again under the current
// leadership, the replica starts where the leader says.
TEST_F(ReplicaFetcherTest, AStartTheLeaderRefusesLeavesTheLogUntilAskedUnderTheCurrentEpoch) {
  auto leader = NewTieredLeader(0_o);    // epoch 2
  auto follower = NewLog("follower-0");  // empty: it asks where to start first
  FetcherOptions options = Fast();
  options.backoff = 10s;  // the refused start is not retried within the test
  auto fetcher = StartFetcher(options);
  auto stale = std::make_shared<LogReplica>(follower, 1);
  fetcher->Add(Follow(0, stale, 1, /*tiered=*/true));
  const int16_t fenced = Code(ErrorCode::kFencedLeaderEpoch);
  ASSERT_TRUE(Eventually([&] { return Errors(leader_.AskedOf(kP0), fenced) >= 1; }))
      << "the leader was never asked under epoch 1";
  EXPECT_EQ(follower->log_start_offset(), 0_o);
  EXPECT_EQ(follower->log_end_offset(), 0_o);
  EXPECT_TRUE(stale->started().empty());
  EXPECT_EQ(fetcher->log_starts(), 0);

  auto current = std::make_shared<LogReplica>(follower, 2);
  fetcher->Add(Follow(0, current, 2, /*tiered=*/true));
  ASSERT_TRUE(Eventually([&] { return follower->log_end_offset() == 30_o; }, 5s))
      << "the follower ends at " << follower->log_end_offset();
  EXPECT_EQ(current->started(), std::vector<Offset>{20_o});
  EXPECT_EQ(follower->log_start_offset(), 20_o);
  EXPECT_EQ(Stored(*follower, 20_o), Stored(*leader, 20_o));
}

}  // namespace
}  // namespace strata::replication
