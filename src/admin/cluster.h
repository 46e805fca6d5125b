#pragma once
// The admin API's view of the cluster (GET /v1/cluster): its id, the
// active controller, and every broker known to the metadata store with its
// listener, rack, registration state, role (as scaling made it), declared
// capacity, the replicas and leaderships placed on it, and (on the active
// controller, whose balancer reads every broker's samples) its latest load. A broker that
// registered once and is gone now is listed as offline. A single broker
// with embedded metadata describes itself.
//
// Thread-safety: reads the metadata view; any thread.
#include <nlohmann/json.hpp>

#include "admin/routes.h"

namespace strata::admin {

nlohmann::json ClusterJson(const AdminContext& admin);

}  // namespace strata::admin
