#pragma once
// The "broker" logger, shared by the files of src/server/.
#include "base/log.h"

namespace strata::server {

inline auto Log() { return log::Get("broker"); }

}  // namespace strata::server
