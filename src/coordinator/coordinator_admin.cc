// ListGroups, DescribeGroups and DeleteGroups.
#include <algorithm>
#include <cctype>
#include <set>

#include "base/log.h"
#include "coordinator/group_coordinator.h"
#include "coordinator/group_records.h"
#include "coordinator/logger.h"

namespace strata::coordinator {

namespace {

using protocol::ErrorCode;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

std::vector<protocol::ListGroupsResponse::Group> GroupCoordinator::ListGroups(
    const std::vector<std::string>& states_filter) {
  std::set<std::string> filter;
  for (const auto& s : states_filter) filter.insert(Lower(Trim(s)));
  std::vector<protocol::ListGroupsResponse::Group> out;
  for (auto& shared : Snapshot()) {
    LockedGroup g(shared);
    if (g->Is(GroupState::kDead)) continue;
    const bool consumer = g->IsConsumerGroup();
    std::string state =
        consumer ? ConsumerGroupStateName(g->consumer->state()) : GroupStateName(g->state());
    if (!filter.empty() && !filter.count(Lower(state))) continue;
    out.push_back({g->group_id(), consumer ? "consumer" : g->protocol_type().value_or(""), state});
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.group_id < b.group_id; });
  return out;
}

protocol::DescribeGroupsResponse::Group GroupCoordinator::DescribeGroup(
    const std::string& group_id) {
  protocol::DescribeGroupsResponse::Group out;
  out.group_id = group_id;
  LockedGroup g = Acquire(group_id, false);
  if (!g || g->IsConsumerGroup()) {
    // DescribeGroups is for classic groups; consumer groups answer
    // ConsumerGroupDescribe (the handler adds the error from v6).
    out.group_state = GroupStateName(GroupState::kDead);
    return out;
  }
  out.group_state = GroupStateName(g->state());
  out.protocol_type = g->protocol_type().value_or("");
  // Member metadata is only shown once the protocol is settled (Stable).
  bool stable = g->Is(GroupState::kStable);
  if (stable) out.protocol_data = g->protocol_name().value_or("");
  for (const auto& [id, m] : g->members()) {
    auto& om = out.members.emplace_back();
    om.member_id = id;
    om.group_instance_id = m.group_instance_id;
    om.client_id = m.client_id;
    om.client_host = m.client_host;
    if (stable) om.member_metadata = m.Metadata(out.protocol_data);
    om.member_assignment = m.assignment;
  }
  return out;
}

protocol::DeleteGroupsResponse::GroupResult GroupCoordinator::DeleteGroup(
    const std::string& group_id) {
  protocol::DeleteGroupsResponse::GroupResult out;
  out.group_id = group_id;
  LockedGroup g = Acquire(group_id, false);
  if (!g) {
    out.error_code = Code(ErrorCode::kGroupIdNotFound);
    return out;
  }
  if (!g->Is(GroupState::kEmpty) || (g->IsConsumerGroup() && !g->consumer->members().empty())) {
    out.error_code = Code(ErrorCode::kNonEmptyGroup);
    return out;
  }
  std::vector<CoordinatorRecord> records;
  if (g->IsConsumerGroup()) {
    for (const auto& r : g->consumer->DeleteRecords())
      records.push_back(EncodeConsumerGroupRecord(r));
  }
  size_t offsets = 0;
  for (const auto& [topic, parts] : g->offsets) {
    for (const auto& [partition, c] : parts) {
      records.push_back({EncodeOffsetCommitKey({group_id, topic, partition}), std::nullopt});
      ++offsets;
    }
  }
  records.push_back({EncodeGroupMetadataKey(group_id), std::nullopt});
  Status st = Persist(*g, records);
  if (!st.ok()) {
    Log()->warn("group {}: deletion not stored: {}", group_id, st.error().message);
    out.error_code = Code(ErrorCode::kCoordinatorNotAvailable);
    return out;
  }
  g->offsets.clear();
  g->consumer.reset();
  g->TransitionTo(GroupState::kDead, WallNow());
  Unlink(g.shared());
  Log()->info("group {} deleted ({} offsets)", group_id, offsets);
  return out;
}

}  // namespace strata::coordinator
