#pragma once
// ConsumerGroup: one group of KIP-848's consumer protocol, as Kafka's
// GroupMetadataManager keeps it. The coordinator owns the assignment:
//   - the group epoch moves whenever what the group should look like changes
//     (a member joins, leaves or is fenced, a subscription changes, a
//     subscribed topic gains partitions);
//   - the target assignment is recomputed by a server-side assignor when a
//     heartbeat finds the group epoch ahead of the assignment epoch;
//   - each member then reconciles towards its target, one step per
//     heartbeat (member_reconciliation.h), revoking before it is given
//     anything another member still holds.
// State changes only by replaying records (consumer_group_records.h): a
// heartbeat works out the records it needs against the current state and
// the answer the member will get, the coordinator writes them to
// __consumer_offsets, and only once they are written does it replay them
// here. A failed write leaves the group as it was. Loading a partition
// replays the same records, so a new coordinator rebuilds the same group.
//
// Timers (the session timeout of every member, the rebalance timeout of a
// member revoking partitions) are deadlines kept here, not in records; the
// coordinator asks for expired members and fences them.
//
// Thread-safety: none; the coordinator holds the group's mutex.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "coordinator/consumer_group_records.h"
#include "coordinator/coordinator_config.h"
#include "coordinator/server_assignor.h"
#include "protocol/error_code.h"
#include "protocol/messages/consumer_group_describe.h"
#include "protocol/messages/consumer_group_heartbeat.h"

namespace strata::coordinator {

// The topics a heartbeat may subscribe to, as the cluster's metadata has
// them now.
struct TopicCatalog {
  std::function<std::optional<std::pair<TopicId, int32_t>>(const std::string& name)> by_name;
  std::function<std::optional<std::string>(const TopicId& id)> name_of;
  // Every topic a regular expression may match (internal topics left out).
  std::function<std::vector<std::string>()> names;
};

// How long a regular expression's matches are reused before the topics are
// matched again (Kafka refreshes them at most every 10 s, so a topic created
// later joins the subscription within that).
inline constexpr int64_t kRegexRefreshMs = 10000;

struct ConsumerGroupMember {
  std::string member_id;
  ConsumerMemberMetadata metadata;
  MemberAssignment current;
};

// Kafka's consumer group states: "Empty", "Assigning", "Reconciling", "Stable".
enum class ConsumerGroupState : uint8_t { kEmpty, kAssigning, kReconciling, kStable };
const char* ConsumerGroupStateName(ConsumerGroupState s);

// What a heartbeat, a leave or a fence needs written, and the answer to
// give once it is.
struct ConsumerGroupChange {
  std::vector<ConsumerGroupRecord> records;
  protocol::ConsumerGroupHeartbeatResponse response;
};

// The request checks Kafka makes before looking at any group: NONE or
// INVALID_REQUEST / UNSUPPORTED_ASSIGNOR / INVALID_REGULAR_EXPRESSION, with
// the message in `message`.
protocol::ErrorCode ValidateHeartbeat(const protocol::ConsumerGroupHeartbeatRequest& req,
                                      int16_t api_version, const ConsumerGroupConfig& config,
                                      std::string* message);

class ConsumerGroup {
 public:
  explicit ConsumerGroup(std::string group_id) : group_id_(std::move(group_id)) {}

  const std::string& group_id() const { return group_id_; }
  int32_t group_epoch() const { return group_epoch_; }
  int32_t assignment_epoch() const { return assignment_epoch_; }
  const std::map<std::string, ConsumerGroupMember>& members() const { return members_; }
  const ConsumerGroupMember* member(const std::string& id) const;
  ConsumerGroupState state() const;
  // The assignor the next target would be computed with.
  std::string PreferredAssignor(const ConsumerGroupConfig& config) const;
  // Whether replaying has left nothing of the group (its records deleted).
  bool IsGone() const { return !exists_ && members_.empty(); }

  // A heartbeat at epoch >= 0 (a validated request); an error answer has no
  // records. `now_ms` is monotonic.
  ConsumerGroupChange Heartbeat(const protocol::ConsumerGroupHeartbeatRequest& req,
                                const RequestContext& ctx, const TopicCatalog& topics,
                                const ConsumerGroupConfig& config) const;
  // A leave (epoch -1) or a static member's temporary leave (-2).
  ConsumerGroupChange Leave(const protocol::ConsumerGroupHeartbeatRequest& req,
                            const TopicCatalog& topics) const;
  // Forgets regular-expression matches older than kRegexRefreshMs, so the
  // next heartbeat matches the topics again; call before Heartbeat.
  void ExpireRegexMatches(int64_t now_ms);
  // Whether any member subscribes to `topic` (by name or expression).
  bool IsSubscribed(const std::string& topic) const;

  // Removes members (timed out): their tombstones and the group epoch bump.
  std::vector<ConsumerGroupRecord> Fence(const std::vector<std::string>& member_ids,
                                         const TopicCatalog& topics) const;
  // Every record that deletes the group (DeleteGroups on an empty group).
  std::vector<ConsumerGroupRecord> DeleteRecords() const;

  // Applies a written record; kCorrupt when it contradicts the state.
  Status Replay(const ConsumerGroupRecord& record);

  // --- timers (monotonic ms)
  // After a successful heartbeat: the member's session restarts, and its
  // rebalance timeout runs while it is revoking.
  void ArmTimers(const std::string& member_id, int64_t now_ms, const ConsumerGroupConfig& config);
  // Members whose session or rebalance timeout has passed.
  std::vector<std::string> Expired(int64_t now_ms) const;
  int64_t NextDeadline() const;

  protocol::ConsumerGroupDescribeResponse::Group Describe(const TopicCatalog& topics,
                                                          const ConsumerGroupConfig& config) const;

 private:
  struct Timer {
    int64_t session_deadline_ms = INT64_MAX;
    int64_t rebalance_deadline_ms = INT64_MAX;
    int32_t revoking_epoch = -1;  // the epoch the rebalance timeout was armed at
  };

  // The group's subscribed topics (names of every member, with `member`
  // in place of the member of its id): their hash for the metadata check.
  int64_t SubscriptionHash(const std::map<std::string, const ConsumerMemberMetadata*>& subs,
                           const TopicCatalog& topics) const;
  std::map<std::string, const ConsumerMemberMetadata*> Subscriptions() const;
  // The topic names a member subscribes to: its names and what its
  // expression matches now.
  std::set<std::string> SubscribedNames(const ConsumerMemberMetadata& m,
                                        const TopicCatalog& topics) const;
  const std::vector<std::string>& Matches(const std::string& regex,
                                          const TopicCatalog& topics) const;
  // The epoch of the member that holds a partition (assigned or revoking).
  int32_t OwnerEpoch(const TopicId& t, int32_t p) const;
  void Own(const std::string& member_id, const MemberAssignment& a, bool add);
  void FenceRecords(const std::string& member_id, std::vector<ConsumerGroupRecord>& out) const;

  std::string group_id_;
  bool exists_ = false;  // a group metadata record is in
  int32_t group_epoch_ = 0;
  int64_t metadata_hash_ = 0;
  int32_t assignment_epoch_ = 0;
  std::map<std::string, ConsumerGroupMember> members_;
  std::map<std::string, TopicAssignment> targets_;
  std::map<std::string, std::string> static_members_;  // instance id -> member id
  // partition -> (the member holding or revoking it, that member's epoch)
  std::map<std::pair<TopicId, int32_t>, std::pair<std::string, int32_t>> owners_;
  std::map<std::string, Timer> timers_;
  // Derived, not replayed: each expression's matching topics and when they
  // were matched (monotonic ms; 0 until ExpireRegexMatches first runs).
  struct RegexMatches {
    std::vector<std::string> topics;
    int64_t matched_at_ms = 0;
  };
  mutable std::map<std::string, RegexMatches> regexes_;
  int64_t now_ms_ = 0;
};

}  // namespace strata::coordinator
