#pragma once
// Server-side assignors of KIP-848's consumer groups: the coordinator, not a
// group leader, decides which member consumes which partition. Given each
// member's subscription and its current target, an assignor returns the next
// target of every member. Kafka's two ship here under Kafka's names:
//   uniform  spreads all subscribed partitions as evenly as the
//            subscriptions allow, moving as few as it can (sticky);
//   range    gives each member a contiguous range of every topic it
//            subscribes to, so equal-sized topics are co-partitioned.
// `group.consumer.assignors` lists those a broker offers; the first is the
// default, a member may name another (ServerAssignor in its heartbeat).
//
// Thread-safety: assignors are stateless; Assign may run on any thread.
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::coordinator {

using TopicId = protocol::Uuid;
// A member's partitions: topic id -> partition indexes.
using TopicAssignment = std::map<TopicId, std::set<int32_t>>;

// A topic as the assignor sees it.
struct AssignableTopic {
  std::string name;
  int32_t partitions = 0;
};
using AssignableTopics = std::map<TopicId, AssignableTopic>;

struct AssignmentSpec {
  struct Member {
    std::optional<std::string> rack;
    std::set<TopicId> subscribed;  // resolved topic ids (names and regex)
    TopicAssignment current;       // the member's present target
  };
  std::map<std::string, Member> members;  // by member id
};

// Every member of the spec appears in the result, with an empty assignment
// if it gets nothing.
using GroupAssignment = std::map<std::string, TopicAssignment>;

class ServerAssignor {
 public:
  virtual ~ServerAssignor() = default;
  virtual const char* name() const = 0;
  virtual GroupAssignment Assign(const AssignmentSpec& spec,
                                 const AssignableTopics& topics) const = 0;
};

inline constexpr const char* kUniformAssignor = "uniform";
inline constexpr const char* kRangeAssignor = "range";

// The assignor of that name; nullptr for a name Strata does not know.
std::unique_ptr<ServerAssignor> MakeServerAssignor(const std::string& name);

// Total partitions in an assignment.
size_t PartitionCount(const TopicAssignment& a);

}  // namespace strata::coordinator
