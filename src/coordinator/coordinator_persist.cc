// Turning group state into __consumer_offsets records.
#include "coordinator/group_coordinator.h"
#include "coordinator/group_records.h"

namespace strata::coordinator {

Status GroupCoordinator::Persist(const ClassicGroup& g,
                                 const std::vector<CoordinatorRecord>& records) {
  return log_->Append(PartitionFor(g.group_id()), records);
}

CoordinatorRecord GroupCoordinator::GroupMetadataRecord(
    const ClassicGroup& g, const std::map<std::string, Bytes>* assignment) const {
  GroupMetadataValue v;
  v.protocol_type = g.protocol_type().value_or("");
  v.generation = g.generation();
  v.protocol = g.protocol_name();
  v.leader = g.leader();
  v.current_state_timestamp = g.state_timestamp_ms();
  for (const auto& [id, m] : g.members()) {
    GroupMetadataValue::Member out;
    out.member_id = id;
    out.group_instance_id = m.group_instance_id;
    out.client_id = m.client_id;
    out.client_host = m.client_host;
    out.rebalance_timeout = m.rebalance_timeout_ms;
    out.session_timeout = m.session_timeout_ms;
    out.subscription = m.Metadata(g.protocol_name().value_or(""));
    if (assignment) {
      auto it = assignment->find(id);
      if (it != assignment->end()) out.assignment = it->second;
    } else {
      out.assignment = m.assignment;
    }
    v.members.push_back(std::move(out));
  }
  return {EncodeGroupMetadataKey(g.group_id()), EncodeGroupMetadataValue(v)};
}

CoordinatorRecord GroupCoordinator::EmptyGroupRecord(const ClassicGroup& g) const {
  GroupMetadataValue v;
  v.current_state_timestamp = g.state_timestamp_ms();
  return {EncodeGroupMetadataKey(g.group_id()), EncodeGroupMetadataValue(v)};
}

}  // namespace strata::coordinator
