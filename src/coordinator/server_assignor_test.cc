#include "coordinator/server_assignor.h"

#include <gtest/gtest.h>

#include <random>

namespace strata::coordinator {
namespace {

TopicId T(uint8_t n) {
  TopicId id{};
  id[15] = n;
  return id;
}

AssignableTopics Topics(std::vector<int32_t> partitions) {
  AssignableTopics out;
  for (size_t i = 0; i < partitions.size(); ++i) {
    out[T(static_cast<uint8_t>(i + 1))] = {"t" + std::to_string(i + 1), partitions[i]};
  }
  return out;
}

std::set<TopicId> All(const AssignableTopics& topics) {
  std::set<TopicId> out;
  for (const auto& [id, t] : topics) out.insert(id);
  return out;
}

// Every partition of a subscribed topic goes to exactly one member, which
// subscribes to it.
void ExpectComplete(const AssignmentSpec& spec, const AssignableTopics& topics,
                    const GroupAssignment& got) {
  ASSERT_EQ(got.size(), spec.members.size());
  std::map<std::pair<TopicId, int32_t>, std::string> owner;
  for (const auto& [member, assignment] : got) {
    for (const auto& [t, partitions] : assignment) {
      EXPECT_EQ(spec.members.at(member).subscribed.count(t), 1u) << member;
      for (int32_t p : partitions) {
        EXPECT_LT(p, topics.at(t).partitions);
        auto [it, fresh] = owner.emplace(std::make_pair(t, p), member);
        EXPECT_TRUE(fresh) << "partition " << p << " twice: " << it->second << ", " << member;
      }
    }
  }
  size_t wanted = 0;
  for (const auto& [t, topic] : topics) {
    bool subscribed = false;
    for (const auto& [id, m] : spec.members) subscribed |= m.subscribed.count(t) > 0;
    if (subscribed) wanted += static_cast<size_t>(topic.partitions);
  }
  EXPECT_EQ(owner.size(), wanted);
}

std::pair<size_t, size_t> MinMax(const GroupAssignment& got) {
  size_t lo = SIZE_MAX, hi = 0;
  for (const auto& [member, assignment] : got) {
    lo = std::min(lo, PartitionCount(assignment));
    hi = std::max(hi, PartitionCount(assignment));
  }
  return {lo, hi};
}

TEST(UniformAssignorTest, SpreadsEvenlyAndMovesOnlyWhatItMustWhenAMemberJoins) {
  auto uniform = MakeServerAssignor(kUniformAssignor);
  const AssignableTopics topics = Topics({7, 5});  // 12 partitions
  AssignmentSpec spec;
  for (const char* m : {"a", "b", "c"}) spec.members[m].subscribed = All(topics);
  GroupAssignment first = uniform->Assign(spec, topics);
  ExpectComplete(spec, topics, first);
  EXPECT_EQ(MinMax(first), std::make_pair(size_t{4}, size_t{4}));

  // A fourth member: each of the three gives up exactly one partition.
  for (const auto& [m, a] : first) spec.members[m].current = a;
  spec.members["d"].subscribed = All(topics);
  GroupAssignment second = uniform->Assign(spec, topics);
  ExpectComplete(spec, topics, second);
  EXPECT_EQ(MinMax(second), std::make_pair(size_t{3}, size_t{3}));
  for (const char* m : {"a", "b", "c"}) {
    size_t kept = 0;
    for (const auto& [t, ps] : second[m]) {
      for (int32_t p : ps) kept += first[m][t].count(p);
    }
    EXPECT_EQ(kept, 3u) << m;
  }

  // Assigning again changes nothing (a stable target).
  for (const auto& [m, a] : second) spec.members[m].current = a;
  EXPECT_EQ(uniform->Assign(spec, topics), second);
}

TEST(UniformAssignorTest, ALeavingMembersPartitionsGoToTheOthersAndTheRestStay) {
  auto uniform = MakeServerAssignor(kUniformAssignor);
  const AssignableTopics topics = Topics({10});
  AssignmentSpec spec;
  for (const char* m : {"a", "b", "c", "d", "e"}) spec.members[m].subscribed = All(topics);
  GroupAssignment first = uniform->Assign(spec, topics);
  spec.members.erase("e");
  for (auto& [m, member] : spec.members) member.current = first[m];
  GroupAssignment second = uniform->Assign(spec, topics);
  ExpectComplete(spec, topics, second);
  EXPECT_EQ(MinMax(second), std::make_pair(size_t{2}, size_t{3}));
  for (const auto& [m, member] : spec.members) {
    for (int32_t p : first[m][T(1)]) EXPECT_EQ(second[m][T(1)].count(p), 1u) << m << " lost " << p;
  }
}

// Subscriptions that differ: "a" reads only t1, "b" only t2, "c" both. An
// even spread needs "c" to take t1 partitions from "a" while handing its t2
// partitions to "b": a chain, not a direct move.
TEST(UniformAssignorTest, HeterogeneousSubscriptionsAreEvenedThroughChains) {
  auto uniform = MakeServerAssignor(kUniformAssignor);
  const AssignableTopics topics = Topics({4, 2});
  AssignmentSpec spec;
  spec.members["a"].subscribed = {T(1)};
  spec.members["b"].subscribed = {T(2)};
  spec.members["c"].subscribed = {T(1), T(2)};
  // A lopsided start: a has all of t1, c all of t2.
  spec.members["a"].current = {{T(1), {0, 1, 2, 3}}};
  spec.members["c"].current = {{T(2), {0, 1}}};
  GroupAssignment got = uniform->Assign(spec, topics);
  ExpectComplete(spec, topics, got);
  EXPECT_EQ(MinMax(got), std::make_pair(size_t{2}, size_t{2}));
}

TEST(UniformAssignorTest, RandomSubscriptionsAlwaysCompleteAndWithinOneWhenHomogeneous) {
  auto uniform = MakeServerAssignor(kUniformAssignor);
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::vector<int32_t> sizes;
    for (int t = 0, n = 1 + static_cast<int>(rng() % 5); t < n; ++t) {
      sizes.push_back(static_cast<int32_t>(rng() % 20));
    }
    const AssignableTopics topics = Topics(sizes);
    const bool homogeneous = round % 2 == 0;
    AssignmentSpec spec;
    for (int m = 0, n = 1 + static_cast<int>(rng() % 8); m < n; ++m) {
      auto& member = spec.members["m" + std::to_string(m)];
      for (const auto& [id, t] : topics) {
        if (homogeneous || rng() % 2 == 0) member.subscribed.insert(id);
      }
      // A stale current target, with partitions that no longer exist.
      for (const auto& [id, t] : topics) {
        if (rng() % 3 == 0) member.current[id] = {static_cast<int32_t>(rng() % 25)};
      }
    }
    SCOPED_TRACE(round);
    GroupAssignment got = uniform->Assign(spec, topics);
    ExpectComplete(spec, topics, got);
    if (homogeneous) {
      auto [lo, hi] = MinMax(got);
      EXPECT_LE(hi - lo, 1u);
    }
  }
}

TEST(RangeAssignorTest, EachTopicInContiguousRangesSoEqualTopicsArePartitionedAlike) {
  auto range = MakeServerAssignor(kRangeAssignor);
  const AssignableTopics topics = Topics({5, 5, 2});
  AssignmentSpec spec;
  for (const char* m : {"b", "a"}) spec.members[m].subscribed = All(topics);
  spec.members["c"].subscribed = {T(1), T(2)};
  GroupAssignment got = range->Assign(spec, topics);
  ExpectComplete(spec, topics, got);
  // t1 and t2: a [0,1], b [2,3], c [4]; t3 (a and b only): a [0], b [1].
  for (TopicId t : {T(1), T(2)}) {
    EXPECT_EQ(got["a"][t], (std::set<int32_t>{0, 1}));
    EXPECT_EQ(got["b"][t], (std::set<int32_t>{2, 3}));
    EXPECT_EQ(got["c"][t], (std::set<int32_t>{4}));
  }
  EXPECT_EQ(got["a"][T(3)], (std::set<int32_t>{0}));
  EXPECT_EQ(got["b"][T(3)], (std::set<int32_t>{1}));
  EXPECT_EQ(got["c"].count(T(3)), 0u);
}

TEST(ServerAssignorTest, UnknownNamesHaveNoAssignor) {
  EXPECT_EQ(MakeServerAssignor("sticky"), nullptr);
  EXPECT_STREQ(MakeServerAssignor("uniform")->name(), "uniform");
  EXPECT_STREQ(MakeServerAssignor("range")->name(), "range");
}

}  // namespace
}  // namespace strata::coordinator
