#pragma once
// The "tiered" logger, shared by the files of src/tiered/.
#include "base/log.h"

namespace strata::tiered {

inline auto Log() { return log::Get("tiered"); }

}  // namespace strata::tiered
