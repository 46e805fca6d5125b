#pragma once
// STRATA_CHECK: an invariant that must hold in every build. On failure it logs
// file, line and message and aborts; it is for bugs, never for bad input.
#include <fmt/format.h>

namespace strata::detail {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const std::string& msg);
}

#define STRATA_CHECK(cond, ...)                                                           \
  do {                                                                                    \
    if (__builtin_expect(!(cond), 0)) {                                                   \
      ::strata::detail::CheckFailed(__FILE__, __LINE__, #cond, fmt::format(__VA_ARGS__)); \
    }                                                                                     \
  } while (0)
