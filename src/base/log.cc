#include "base/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>

namespace strata::log {

namespace {
std::mutex g_mu;
spdlog::level::level_enum g_level = spdlog::level::info;
}  // namespace

std::shared_ptr<spdlog::logger> Get(const std::string& subsystem) {
  std::lock_guard lock(g_mu);
  if (auto existing = spdlog::get(subsystem)) return existing;
  auto logger = spdlog::stderr_color_mt(subsystem);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  logger->set_level(g_level);
  return logger;
}

void SetLevel(const std::string& level) {
  std::lock_guard lock(g_mu);
  g_level = spdlog::level::from_str(level);
  spdlog::set_level(g_level);
}

}  // namespace strata::log
