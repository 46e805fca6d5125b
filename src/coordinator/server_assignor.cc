// The uniform and range server-side assignors (see server_assignor.h).
#include "coordinator/server_assignor.h"

#include <algorithm>
#include <deque>

namespace strata::coordinator {

namespace {

// Who subscribes to each existing topic, in member id order.
std::map<TopicId, std::vector<std::string>> Subscribers(const AssignmentSpec& spec,
                                                        const AssignableTopics& topics) {
  std::map<TopicId, std::vector<std::string>> out;
  for (const auto& [id, member] : spec.members) {
    for (const TopicId& t : member.subscribed) {
      auto topic = topics.find(t);
      if (topic != topics.end() && topic->second.partitions > 0) out[t].push_back(id);
    }
  }
  return out;
}

GroupAssignment EmptyFor(const AssignmentSpec& spec) {
  GroupAssignment out;
  for (const auto& [id, member] : spec.members) out[id];
  return out;
}

// Uniform: keeps every partition a member already has and may still have
// (first claim wins), gives each remaining one to its least-loaded
// subscriber, then evens the counts out. Evening out moves one partition
// along a chain of members, each handing one to the next that subscribes to
// its topic, from a member to one holding at least two fewer: the ends
// change by one, every member between keeps its count. Each such shift
// lowers the sum of squared counts, so it ends; when none is left, no
// member could give to a less loaded one through any chain, which is as even
// as the subscriptions allow.
class UniformAssignor : public ServerAssignor {
 public:
  const char* name() const override { return kUniformAssignor; }

  GroupAssignment Assign(const AssignmentSpec& spec,
                         const AssignableTopics& topics) const override {
    GroupAssignment out = EmptyFor(spec);
    const auto subscribers = Subscribers(spec, topics);
    std::map<std::string, size_t> count;
    for (const auto& [id, member] : spec.members) count[id] = 0;
    std::set<std::pair<TopicId, int32_t>> taken;
    for (const auto& [id, member] : spec.members) {
      for (const auto& [t, partitions] : member.current) {
        auto topic = topics.find(t);
        if (topic == topics.end() || member.subscribed.count(t) == 0) continue;
        for (int32_t p : partitions) {
          if (p < 0 || p >= topic->second.partitions || !taken.insert({t, p}).second) continue;
          out[id][t].insert(p);
          count[id]++;
        }
      }
    }
    for (const auto& [t, subs] : subscribers) {
      for (int32_t p = 0; p < topics.at(t).partitions; ++p) {
        if (taken.count({t, p}) > 0) continue;
        const std::string& least = *std::min_element(
            subs.begin(), subs.end(),
            [&](const std::string& a, const std::string& b) { return count[a] < count[b]; });
        out[least][t].insert(p);
        count[least]++;
      }
    }
    while (ShiftOne(out, count, subscribers)) {
    }
    for (auto& [id, assignment] : out)
      std::erase_if(assignment, [](const auto& e) { return e.second.empty(); });
    return out;
  }

 private:
  // One shift along the shortest chain from the most loaded member that has
  // one; false when there is none.
  static bool ShiftOne(GroupAssignment& out, std::map<std::string, size_t>& count,
                       const std::map<TopicId, std::vector<std::string>>& subscribers) {
    std::vector<std::string> order;
    for (const auto& [id, a] : out) order.push_back(id);
    std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
      return count.at(a) > count.at(b);
    });
    if (order.empty()) return false;
    const size_t least = count.at(order.back());
    for (const std::string& from : order) {
      // A chain must end at a member at least two below `from`: none left
      // once `from` is within one of the least loaded (so a balanced group
      // costs no search at all).
      if (count[from] < least + 2) break;
      // Breadth first: member -> (the member before it, the topic handed on).
      std::map<std::string, std::pair<std::string, TopicId>> via;
      std::deque<std::string> queue{from};
      via[from] = {from, TopicId{}};
      std::optional<std::string> end;
      while (!queue.empty() && !end) {
        const std::string x = queue.front();
        queue.pop_front();
        for (const auto& [t, partitions] : out[x]) {
          if (partitions.empty()) continue;
          for (const std::string& y : subscribers.at(t)) {
            if (via.count(y) > 0) continue;
            via[y] = {x, t};
            if (count[y] + 2 <= count[from]) {
              end = y;
              break;
            }
            queue.push_back(y);
          }
          if (end) break;
        }
      }
      if (!end) continue;
      for (std::string y = *end; y != from;) {
        const auto [x, t] = via[y];
        std::set<int32_t>& given = out[x][t];
        const int32_t p = *given.rbegin();
        given.erase(p);
        out[y][t].insert(p);
        y = x;
      }
      count[from]--;
      count[*end]++;
      return true;
    }
    return false;
  }
};

// Range: per topic, its subscribers in member id order take contiguous
// ranges, the first (partitions % subscribers) one longer.
class RangeAssignor : public ServerAssignor {
 public:
  const char* name() const override { return kRangeAssignor; }

  GroupAssignment Assign(const AssignmentSpec& spec,
                         const AssignableTopics& topics) const override {
    GroupAssignment out = EmptyFor(spec);
    for (const auto& [t, subs] : Subscribers(spec, topics)) {
      const int32_t total = topics.at(t).partitions;
      const int32_t members = static_cast<int32_t>(subs.size());
      int32_t next = 0;
      for (int32_t i = 0; i < members; ++i) {
        const int32_t length = total / members + (i < total % members ? 1 : 0);
        for (int32_t p = next; p < next + length; ++p) out[subs[i]][t].insert(p);
        next += length;
      }
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ServerAssignor> MakeServerAssignor(const std::string& name) {
  if (name == kUniformAssignor) return std::make_unique<UniformAssignor>();
  if (name == kRangeAssignor) return std::make_unique<RangeAssignor>();
  return nullptr;
}

size_t PartitionCount(const TopicAssignment& a) {
  size_t n = 0;
  for (const auto& [t, partitions] : a) n += partitions.size();
  return n;
}

}  // namespace strata::coordinator
