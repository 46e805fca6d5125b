#pragma once
// The "balancer" logger, shared by the files of src/balancer/service/.
#include "base/log.h"

namespace strata::balancer {

inline auto Log() { return log::Get("balancer"); }

}  // namespace strata::balancer
