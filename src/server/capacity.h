#pragma once
// DeclaredCapacity: what this broker tells the cluster it can carry
// (strata.broker.capacity.*), written into its registration for the
// balancer. Network capacity is only what the operator declares; disk and
// CPU default to what the machine has (the log.dirs file system's size, the
// cores this process may run on).
#include <cstdint>
#include <map>
#include <string>

#include "config/broker_config.h"

namespace strata::server {

std::map<std::string, int64_t> DeclaredCapacity(const config::BrokerConfig& config);

}  // namespace strata::server
