#pragma once
// The cluster's id types, as base/ids.h defines them for every layer.
#include "base/ids.h"

namespace strata::cluster {

using ::strata::BrokerEpoch;
using ::strata::kNoLeaderEpoch;
using ::strata::kNoNode;
using ::strata::LeaderEpoch;
using ::strata::NodeId;
using ::strata::PartitionEpoch;

}  // namespace strata::cluster
