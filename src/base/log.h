#pragma once
// Named per-subsystem loggers (spdlog). One line per event, with context
// (topic-partition, offsets); never one line per record.
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace strata::log {

// Returns the logger for a subsystem ("net", "storage", "broker", ...),
// creating it on first use. Thread-safe.
std::shared_ptr<spdlog::logger> Get(const std::string& subsystem);

// Sets the level of every logger ("trace".."off").
void SetLevel(const std::string& level);

}  // namespace strata::log
