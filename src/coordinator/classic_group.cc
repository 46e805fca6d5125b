#include "coordinator/classic_group.h"

#include <algorithm>

#include "base/check.h"
#include "coordinator/consumer_protocol.h"

namespace strata::coordinator {

using protocol::ErrorCode;

const char* GroupStateName(GroupState state) {
  switch (state) {
    case GroupState::kEmpty:
      return "Empty";
    case GroupState::kPreparingRebalance:
      return "PreparingRebalance";
    case GroupState::kCompletingRebalance:
      return "CompletingRebalance";
    case GroupState::kStable:
      return "Stable";
    case GroupState::kDead:
      return "Dead";
  }
  return "Unknown";
}

Bytes GroupMember::Metadata(const std::string& protocol) const {
  for (const auto& p : protocols) {
    if (p.name == protocol) return p.metadata;
  }
  return {};
}

std::string GroupMember::Vote(const std::set<std::string>& candidates) const {
  for (const auto& p : protocols) {
    if (candidates.count(p.name)) return p.name;
  }
  return {};
}

bool KeepLaterCommit(std::map<int32_t, CommittedOffset>& partitions, int32_t partition,
                     CommittedOffset offset) {
  auto it = partitions.find(partition);
  if (it != partitions.end() && it->second.record_offset > offset.record_offset) return false;
  partitions[partition] = std::move(offset);
  return true;
}

ClassicGroup::ClassicGroup(std::string group_id, int64_t now_ms)
    : group_id_(std::move(group_id)),
      previous_state_(GroupState::kDead),
      state_timestamp_ms_(now_ms) {}

void ClassicGroup::Restore(GroupState state, int32_t generation,
                           std::optional<std::string> protocol_type,
                           std::optional<std::string> protocol_name,
                           std::optional<std::string> leader, int64_t state_timestamp_ms) {
  state_ = state;
  generation_ = generation;
  protocol_type_ = std::move(protocol_type);
  protocol_name_ = std::move(protocol_name);
  leader_ = std::move(leader);
  state_timestamp_ms_ = state_timestamp_ms;
}

GroupMember* ClassicGroup::member(const std::string& member_id) {
  auto it = members_.find(member_id);
  return it == members_.end() ? nullptr : &it->second;
}

void ClassicGroup::CountProtocols(const GroupMember& m, int delta) {
  for (const auto& p : m.protocols) supported_protocols_[p.name] += delta;
}

GroupMember& ClassicGroup::Add(GroupMember member, JoinCallback join) {
  if (member.group_instance_id) {
    STRATA_CHECK(!static_members_.count(*member.group_instance_id), "static member {} added twice",
                 *member.group_instance_id);
    static_members_[*member.group_instance_id] = member.member_id;
  }
  if (members_.empty()) protocol_type_ = member.protocol_type;
  if (!leader_) leader_ = member.member_id;
  std::string id = member.member_id;
  auto [it, inserted] = members_.emplace(id, std::move(member));
  STRATA_CHECK(inserted, "member {} added twice", id);
  CountProtocols(it->second, +1);
  it->second.awaiting_join = std::move(join);
  if (it->second.IsAwaitingJoin()) ++num_awaiting_join_;
  pending_members_.erase(id);
  return it->second;
}

void ClassicGroup::Remove(const std::string& member_id) {
  auto it = members_.find(member_id);
  if (it != members_.end()) {
    CountProtocols(it->second, -1);
    if (it->second.IsAwaitingJoin()) --num_awaiting_join_;
    if (it->second.group_instance_id) static_members_.erase(*it->second.group_instance_id);
    members_.erase(it);
  }
  if (IsLeader(member_id)) {
    leader_.reset();
    if (!members_.empty()) leader_ = members_.begin()->first;
  }
  pending_members_.erase(member_id);
  pending_sync_.erase(member_id);
}

GroupMember& ClassicGroup::ReplaceStaticMember(const std::string& instance_id,
                                               const std::string& old_id,
                                               const std::string& new_id) {
  auto it = members_.find(old_id);
  STRATA_CHECK(it != members_.end(), "replacing unknown member {}", old_id);
  GroupMember old = std::move(it->second);
  members_.erase(it);
  if (old.IsAwaitingJoin()) {
    --num_awaiting_join_;
    protocol::JoinGroupResponse fenced;
    fenced.error_code = Code(ErrorCode::kFencedInstanceId);
    fenced.member_id = old_id;
    std::exchange(old.awaiting_join, nullptr)(std::move(fenced));
  }
  if (old.IsAwaitingSync()) {
    protocol::SyncGroupResponse fenced;
    fenced.error_code = Code(ErrorCode::kFencedInstanceId);
    std::exchange(old.awaiting_sync, nullptr)(std::move(fenced));
  }
  GroupMember replacement = std::move(old);
  replacement.member_id = new_id;
  replacement.is_new = false;
  auto [nit, inserted] = members_.emplace(new_id, std::move(replacement));
  STRATA_CHECK(inserted, "member {} already exists", new_id);
  if (IsLeader(old_id)) leader_ = new_id;
  static_members_[instance_id] = new_id;
  pending_sync_.erase(old_id);
  return nit->second;
}

void ClassicGroup::UpdateMember(GroupMember& member, ProtocolList protocols,
                                int32_t rebalance_timeout_ms, int32_t session_timeout_ms,
                                JoinCallback join) {
  CountProtocols(member, -1);
  member.protocols = std::move(protocols);
  CountProtocols(member, +1);
  member.rebalance_timeout_ms = rebalance_timeout_ms;
  member.session_timeout_ms = session_timeout_ms;
  if (join && !member.IsAwaitingJoin()) {
    ++num_awaiting_join_;
  } else if (!join && member.IsAwaitingJoin()) {
    --num_awaiting_join_;
  }
  member.awaiting_join = std::move(join);
}

bool ClassicGroup::CompleteJoin(GroupMember& member, protocol::JoinGroupResponse response) {
  if (!member.IsAwaitingJoin()) return false;
  --num_awaiting_join_;
  std::exchange(member.awaiting_join, nullptr)(std::move(response));
  return true;
}

bool ClassicGroup::CompleteSync(GroupMember& member, protocol::SyncGroupResponse response) {
  if (!member.IsAwaitingSync()) return false;
  std::exchange(member.awaiting_sync, nullptr)(std::move(response));
  return true;
}

const std::string* ClassicGroup::StaticMemberId(const std::string& instance_id) const {
  auto it = static_members_.find(instance_id);
  return it == static_members_.end() ? nullptr : &it->second;
}

ErrorCode ClassicGroup::ValidateMember(const std::string& member_id,
                                       const std::optional<std::string>& instance_id) const {
  if (instance_id) {
    const std::string* existing = StaticMemberId(*instance_id);
    if (existing == nullptr) return ErrorCode::kUnknownMemberId;
    if (*existing != member_id) return ErrorCode::kFencedInstanceId;
  }
  return HasMember(member_id) ? ErrorCode::kNone : ErrorCode::kUnknownMemberId;
}

bool ClassicGroup::MaybeElectNewJoinedLeader() {
  if (!leader_) return false;
  auto it = members_.find(*leader_);
  if (it != members_.end() && it->second.IsAwaitingJoin()) return true;
  for (const auto& [id, m] : members_) {
    if (m.IsAwaitingJoin()) {
      leader_ = id;
      return true;
    }
  }
  return false;
}

int32_t ClassicGroup::RebalanceTimeoutMs() const {
  int32_t max = 0;
  for (const auto& [id, m] : members_) max = std::max(max, m.rebalance_timeout_ms);
  return max;
}

bool ClassicGroup::CanRebalance() const {
  return state_ == GroupState::kEmpty || state_ == GroupState::kCompletingRebalance ||
         state_ == GroupState::kStable;
}

void ClassicGroup::TransitionTo(GroupState state, int64_t now_ms) {
  bool valid = false;
  switch (state) {
    case GroupState::kEmpty:
      valid = state_ == GroupState::kPreparingRebalance;
      break;
    case GroupState::kPreparingRebalance:
      valid = CanRebalance();
      break;
    case GroupState::kCompletingRebalance:
      valid = state_ == GroupState::kPreparingRebalance;
      break;
    case GroupState::kStable:
      valid = state_ == GroupState::kCompletingRebalance;
      break;
    case GroupState::kDead:
      valid = true;
      break;
  }
  STRATA_CHECK(valid, "group {}: invalid transition {} -> {}", group_id_, GroupStateName(state_),
               GroupStateName(state));
  previous_state_ = state_;
  state_ = state;
  state_timestamp_ms_ = now_ms;
}

bool ClassicGroup::SupportsProtocols(const std::string& protocol_type,
                                     const ProtocolList& protocols) const {
  if (state_ == GroupState::kEmpty) return !protocol_type.empty() && !protocols.empty();
  if (protocol_type_ != protocol_type) return false;
  for (const auto& p : protocols) {
    auto it = supported_protocols_.find(p.name);
    if (it != supported_protocols_.end() && it->second == static_cast<int>(members_.size()))
      return true;
  }
  return false;
}

std::string ClassicGroup::SelectProtocol() const {
  STRATA_CHECK(!members_.empty(), "group {}: selecting a protocol without members", group_id_);
  std::set<std::string> candidates;
  for (const auto& [name, count] : supported_protocols_) {
    if (count == static_cast<int>(members_.size())) candidates.insert(name);
  }
  std::map<std::string, int> votes;
  for (const auto& [id, m] : members_) ++votes[m.Vote(candidates)];
  int best = 0;
  for (const auto& [name, n] : votes) best = std::max(best, n);
  // Ties: the leader's order of preference (then any member's).
  auto leader = leader_ ? members_.find(*leader_) : members_.end();
  const GroupMember& order = leader != members_.end() ? leader->second : members_.begin()->second;
  for (const auto& p : order.protocols) {
    auto it = votes.find(p.name);
    if (it != votes.end() && it->second == best) return p.name;
  }
  for (const auto& [name, n] : votes) {
    if (n == best) return name;
  }
  return {};
}

void ClassicGroup::InitNextGeneration(int64_t now_ms) {
  ++generation_;
  if (!members_.empty()) {
    protocol_name_ = SelectProtocol();
    RecomputeSubscribedTopics();
    TransitionTo(GroupState::kCompletingRebalance, now_ms);
  } else {
    protocol_name_.reset();
    RecomputeSubscribedTopics();
    TransitionTo(GroupState::kEmpty, now_ms);
  }
  pending_sync_.clear();
}

std::vector<protocol::JoinGroupResponse::Member> ClassicGroup::MembersForLeader() const {
  std::vector<protocol::JoinGroupResponse::Member> out;
  out.reserve(members_.size());
  for (const auto& [id, m] : members_) {
    out.push_back({id, m.group_instance_id, m.Metadata(protocol_name_.value_or(""))});
  }
  return out;
}

void ClassicGroup::RecomputeSubscribedTopics() {
  subscribed_topics_.reset();
  if (!UsesConsumerProtocol()) return;
  if (members_.empty()) {
    subscribed_topics_.emplace();
    return;
  }
  if (!protocol_name_) return;
  std::set<std::string> all;
  for (const auto& [id, m] : members_) {
    Bytes metadata = m.Metadata(*protocol_name_);
    auto topics = ParseSubscriptionTopics(metadata);
    if (!topics.ok()) return;  // unknown, as Kafka does on a schema error
    all.insert(topics->begin(), topics->end());
  }
  subscribed_topics_ = std::move(all);
}

bool ClassicGroup::IsSubscribedToTopic(const std::string& topic) const {
  if (consumer) return consumer->IsSubscribed(topic);
  if (subscribed_topics_) return subscribed_topics_->count(topic) > 0;
  return UsesConsumerProtocol();
}

void ClassicGroup::RefreshNextDeadline() {
  int64_t next = std::min(timers.join_deadline_ms, timers.sync_deadline_ms);
  for (const auto& [id, m] : members_) next = std::min(next, m.heartbeat_deadline_ms);
  for (const auto& [id, deadline] : pending_members_) next = std::min(next, deadline);
  if (consumer) next = std::min(next, consumer->NextDeadline());
  next_deadline_ms.store(next, std::memory_order_relaxed);
}

}  // namespace strata::coordinator

namespace strata::coordinator {

bool ClassicGroup::HasPendingTxnOffset(const std::string& topic, int32_t partition) const {
  for (const auto& [producer_id, offsets] : pending_txn_offsets) {
    auto it = offsets.find(topic);
    if (it != offsets.end() && it->second.contains(partition)) return true;
  }
  return false;
}

}  // namespace strata::coordinator
