#pragma once
// The "kafka" logger, shared by the files of src/kafka/.
#include "base/log.h"

namespace strata::kafka {

inline auto Log() { return log::Get("kafka"); }

}  // namespace strata::kafka
