#include "admin/groups.h"

#include "broker/topic_manager.h"
#include "coordinator/group_coordinator.h"

namespace strata::admin {

using nlohmann::json;

json GroupsJson(kafka::BrokerContext& ctx) {
  json out = json::array();
  coordinator::GroupCoordinator* gc = ctx.group_coordinator;
  if (gc == nullptr) return out;
  for (const auto& listed : gc->ListGroups({})) {
    // A KIP-848 group describes itself through ConsumerGroupDescribe.
    const auto modern = gc->DescribeConsumerGroup(listed.group_id);
    const bool consumer_group = modern.error_code == 0;
    const auto described = gc->DescribeGroup(listed.group_id);
    const auto offsets = gc->FetchOffsets(listed.group_id, std::nullopt);
    json partitions = json::array();
    int64_t total_lag = 0;
    for (const auto& t : offsets.topics) {
      for (const auto& p : t.partitions) {
        if (p.committed_offset < 0) continue;
        json row{{"topic", t.name},
                 {"partition", p.partition_index},
                 {"committed_offset", p.committed_offset},
                 {"high_watermark", nullptr},
                 {"lag", nullptr}};
        if (auto partition = ctx.topics.GetPartition({t.name, p.partition_index})) {
          const Offset hw = partition->high_watermark();
          const int64_t lag = std::max<int64_t>(0, hw - Offset(p.committed_offset));
          row["high_watermark"] = hw.value();
          row["lag"] = lag;
          total_lag += lag;
        }
        partitions.push_back(std::move(row));
      }
    }
    out.push_back({{"group", listed.group_id},
                   {"state", listed.group_state},
                   {"protocol_type", listed.protocol_type},
                   {"group_protocol", consumer_group ? "consumer" : "classic"},
                   {"protocol", consumer_group ? modern.assignor_name : described.protocol_data},
                   {"members", consumer_group ? modern.members.size() : described.members.size()},
                   {"total_lag", total_lag},
                   {"partitions", std::move(partitions)}});
  }
  return out;
}

}  // namespace strata::admin
