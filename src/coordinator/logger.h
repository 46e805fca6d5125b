#pragma once
// The "coordinator" logger, shared by the files of src/coordinator/.
#include "base/log.h"

namespace strata::coordinator {

inline auto Log() { return log::Get("coordinator"); }

}  // namespace strata::coordinator
