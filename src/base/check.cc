#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace strata::detail {

void CheckFailed(const char* file, int line, const char* cond, const std::string& msg) {
  std::fprintf(stderr, "FATAL %s:%d: check failed: %s: %s\n", file, line, cond, msg.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace strata::detail
