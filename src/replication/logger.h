#pragma once
// The "replication" logger, shared by the files of src/replication/.
#include "base/log.h"

namespace strata::replication {

inline auto Log() { return log::Get("replication"); }

}  // namespace strata::replication
