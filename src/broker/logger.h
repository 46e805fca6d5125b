#pragma once
// The "broker" logger, shared by the files of src/broker/.
#include "base/log.h"

namespace strata::broker {

inline auto Log() { return log::Get("broker"); }

}  // namespace strata::broker
