#pragma once
// The "admin" logger, shared by the files of src/admin/.
#include "base/log.h"

namespace strata::admin {

inline auto Log() { return log::Get("admin"); }

}  // namespace strata::admin
