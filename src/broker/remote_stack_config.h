#pragma once
// The remote store's decorator settings (strata.remote.retry.*, .hedge.*, .breaker.*,
// .call/.attempt.timeout.ms and the test-only strata.remote.fault.*) read from the broker config.
#include "config/broker_config.h"
#include "tiered/remote_stack.h"

namespace strata::broker {

tiered::RemoteStackOptions RemoteStackOptionsFrom(const config::BrokerConfig& config);

}  // namespace strata::broker
