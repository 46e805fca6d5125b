#pragma once
// Test fixture for GroupCoordinator tests: real __consumer_offsets logs in a
// temp directory, a ManualClock, and helpers that issue requests and capture
// the (possibly delayed) JoinGroup / SyncGroup answers.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/group_coordinator.h"
#include "storage/log.h"

namespace strata::coordinator::testing {

using protocol::JoinGroupRequest;
using protocol::JoinGroupResponse;
using protocol::SyncGroupResponse;

using JoinSlot = std::shared_ptr<std::optional<JoinGroupResponse>>;
using SyncSlot = std::shared_ptr<std::optional<SyncGroupResponse>>;

// ConsumerProtocolSubscription v0 for `topics`.
// One broker's partition leader as far as the offsets log sees it: appends
// to the partition's log at leader epoch 0.
inline CoordinatorLog::Appender AppendAtEpochZero(CoordinatorLog::LogProvider logs) {
  return [logs = std::move(logs)](
             int32_t partition, MutableByteView batch,
             const std::vector<storage::BatchInfo>& infos) -> Result<CoordinatorLog::Appended> {
    auto log = logs(partition);
    if (!log) return MakeError(Errc::kUnavailable, "not hosted here");
    const auto origin = !infos.empty() && infos[0].transactional
                            ? storage::AppendOrigin::kCoordinator
                            : storage::AppendOrigin::kClient;
    STRATA_ASSIGN_OR_RETURN(auto appended, log->Append(batch, infos, LeaderEpoch(0), origin));
    return CoordinatorLog::Appended{appended.last_offset, 0};
  };
}

inline Bytes Subscription(const std::vector<std::string>& topics) {
  Bytes b{0, 0};
  uint32_t n = static_cast<uint32_t>(topics.size());
  for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(n >> s));
  for (const auto& t : topics) {
    b.push_back(uint8_t(t.size() >> 8));
    b.push_back(uint8_t(t.size()));
    b.insert(b.end(), t.begin(), t.end());
  }
  for (int i = 0; i < 4; ++i) b.push_back(0xFF);  // null user data
  return b;
}

inline ProtocolList Protocols(const std::vector<std::string>& names,
                              const std::vector<std::string>& topics = {"topic-a"}) {
  ProtocolList out;
  for (const auto& n : names) out.push_back({n, Subscription(topics)});
  return out;
}

struct JoinOptions {
  std::string member_id;
  ProtocolList protocols = Protocols({"range"});
  std::optional<std::string> instance;
  int16_t version = 5;
  int32_t session_ms = 10000;
  int32_t rebalance_ms = 30000;
  std::string protocol_type = "consumer";
};

// A group brought to Stable by StableGroup().
struct StableInfo {
  std::vector<std::string> members;  // members[0] is the leader
  int32_t generation = -1;
};

class CoordinatorTest : public ::testing::Test {
 protected:
  static constexpr int32_t kPartitions = 3;

  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "strata-coord-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    config_.initial_rebalance_delay_ms = 100;
    config_.min_session_timeout_ms = 1000;
    OpenLogs();
    coord_ = Make();
  }

  void TearDown() override {
    coord_.reset();
    for (auto& l : logs_) {
      if (l) (void)l->Close();
    }
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  void OpenLogs() {
    logs_.clear();
    for (int32_t p = 0; p < kPartitions; ++p) {
      auto log = storage::Log::Open(root_ / ("__consumer_offsets-" + std::to_string(p)),
                                    storage::LogConfig{}, &clock_);
      ASSERT_TRUE(log.ok()) << log.error().message;
      logs_.push_back(std::shared_ptr<storage::Log>(std::move(*log)));
    }
  }

  std::unique_ptr<GroupCoordinator> Make() {
    auto log = std::make_unique<CoordinatorLog>(
        kOffsetsTopic, kPartitions,
        [this](int32_t p) {
          if (on_log_lookup_) on_log_lookup_(p);
          return logs_[p];
        },
        AppendAtEpochZero([this](int32_t p) { return logs_[p]; }), &clock_);
    auto c = std::make_unique<GroupCoordinator>(config_, std::move(log), &clock_);
    Status st = c->Load();
    EXPECT_TRUE(st.ok()) << st.error().message;
    return c;
  }

  // A broker restart: logs closed and reopened from disk, state replayed.
  void Restart() {
    coord_.reset();
    for (auto& l : logs_) ASSERT_TRUE(l->Close().ok());
    OpenLogs();
    coord_ = Make();
  }

  JoinSlot Join(const std::string& group, const JoinOptions& o) {
    JoinGroupRequest req;
    req.group_id = group;
    req.session_timeout_ms = o.session_ms;
    req.rebalance_timeout_ms = o.rebalance_ms;
    req.member_id = o.member_id;
    req.group_instance_id = o.instance;
    req.protocol_type = o.protocol_type;
    req.protocols = o.protocols;
    auto slot = std::make_shared<std::optional<JoinGroupResponse>>();
    coord_->JoinGroup({"client", "/127.0.0.1", o.version}, req, [slot](JoinGroupResponse r) {
      EXPECT_FALSE(slot->has_value()) << "JoinGroup answered twice";
      *slot = std::move(r);
    });
    return slot;
  }

  SyncSlot Sync(const std::string& group, const std::string& member, int32_t generation,
                const std::vector<std::pair<std::string, Bytes>>& assignments = {},
                std::optional<std::string> instance = std::nullopt,
                std::optional<std::string> protocol_name = std::nullopt) {
    protocol::SyncGroupRequest req;
    req.group_id = group;
    req.member_id = member;
    req.generation_id = generation;
    req.group_instance_id = std::move(instance);
    req.protocol_name = std::move(protocol_name);
    for (const auto& [id, a] : assignments) req.assignments.push_back({id, a});
    auto slot = std::make_shared<std::optional<SyncGroupResponse>>();
    coord_->SyncGroup({"client", "/127.0.0.1", 5}, req, [slot](SyncGroupResponse r) {
      EXPECT_FALSE(slot->has_value()) << "SyncGroup answered twice";
      *slot = std::move(r);
    });
    return slot;
  }

  int16_t Heartbeat(const std::string& group, const std::string& member, int32_t generation,
                    std::optional<std::string> instance = std::nullopt) {
    return coord_->Heartbeat({group, generation, member, std::move(instance)}).error_code;
  }

  // Advances the clock in `step` ms increments, ticking, until every slot is
  // answered (at most `max_steps` steps).
  void TickUntil(const std::vector<JoinSlot>& slots, int64_t step = 100, int max_steps = 20) {
    auto all = [&] {
      for (const auto& s : slots) {
        if (!s->has_value()) return false;
      }
      return true;
    };
    for (int i = 0; i < max_steps && !all(); ++i) {
      clock_.Advance(step);
      coord_->Tick();
    }
    ASSERT_TRUE(all()) << "JoinGroup responses still missing";
  }

  // n members join together (v3, so no MEMBER_ID_REQUIRED round), the leader
  // assigns "assign-<i>" to member i, everyone syncs. Members[0] is the leader.
  StableInfo StableGroup(const std::string& group, int n, JoinOptions o = {}) {
    o.version = 3;
    std::vector<JoinSlot> joins;
    for (int i = 0; i < n; ++i) joins.push_back(Join(group, o));
    TickUntil(joins);
    StableInfo info;
    for (const auto& j : joins) {
      EXPECT_EQ((*j)->error_code, 0);
      if ((*j)->member_id == (*j)->leader) {
        info.members.insert(info.members.begin(), (*j)->member_id);
      } else {
        info.members.push_back((*j)->member_id);
      }
      info.generation = (*j)->generation_id;
    }
    std::vector<std::pair<std::string, Bytes>> assignments;
    for (size_t i = 0; i < info.members.size(); ++i) {
      std::string a = "assign-" + std::to_string(i);
      assignments.push_back({info.members[i], Bytes(a.begin(), a.end())});
    }
    std::vector<SyncSlot> syncs;
    for (size_t i = 1; i < info.members.size(); ++i)
      syncs.push_back(Sync(group, info.members[i], info.generation));
    syncs.push_back(Sync(group, info.members[0], info.generation, assignments));
    for (const auto& s : syncs) {
      EXPECT_TRUE(s->has_value());
      if (s->has_value()) {
        EXPECT_EQ((*s)->error_code, 0);
      }
    }
    EXPECT_EQ(coord_->DescribeGroup(group).group_state, "Stable");
    return info;
  }

  protocol::OffsetCommitResponse Commit(const std::string& group, int32_t generation,
                                        const std::string& member, const std::string& topic,
                                        std::vector<std::pair<int32_t, int64_t>> offsets,
                                        int16_t version = 8,
                                        std::optional<std::string> metadata = "md") {
    protocol::OffsetCommitRequest req;
    req.group_id = group;
    req.generation_id = generation;
    req.member_id = member;
    auto& t = req.topics.emplace_back();
    t.name = topic;
    for (auto [p, off] : offsets) t.partitions.push_back({p, off, 4, -1, metadata});
    return coord_->CommitOffsets(req, version);
  }

  // The committed offset of one partition (-1 if none).
  int64_t Committed(const std::string& group, const std::string& topic, int32_t partition) {
    std::vector<protocol::OffsetFetchRequest::Topic> topics{{topic, {partition}}};
    auto g = coord_->FetchOffsets(group, topics);
    return g.topics.at(0).partitions.at(0).committed_offset;
  }

  std::filesystem::path root_;
  ManualClock clock_{1'700'000'000'000};
  CoordinatorConfig config_;
  std::vector<std::shared_ptr<storage::Log>> logs_;
  // Called whenever the coordinator asks for a partition's log (also while
  // it replays one), so a test can look at the coordinator mid-load.
  std::function<void(int32_t)> on_log_lookup_;
  std::unique_ptr<GroupCoordinator> coord_;
};

}  // namespace strata::coordinator::testing
