#pragma once
// The admin API's consumer groups (GET /v1/groups): the groups this broker
// coordinates, each with its state, members and, per partition with a
// committed offset, the offset, the partition's high watermark and the lag
// (null where this broker holds no replica of the partition: its own
// admin API has it).
//
// Thread-safety: any thread (the coordinator and the partitions lock
// themselves).
#include <nlohmann/json.hpp>

#include "kafka/broker_context.h"

namespace strata::admin {

nlohmann::json GroupsJson(kafka::BrokerContext& ctx);

}  // namespace strata::admin
