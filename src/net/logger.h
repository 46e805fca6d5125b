#pragma once
// The "net" logger, shared by the files of src/net/.
#include "base/log.h"

namespace strata::net {

inline auto Log() { return log::Get("net"); }

}  // namespace strata::net
