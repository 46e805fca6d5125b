#pragma once
// Small per-partition state files that Kafka keeps per log directory but
// Strata keeps inside the partition directory (Kafka ignores unknown files):
//   strata-log-start-offset   "0\n<log start offset>\n" (version line, value),
//                             rewritten atomically when DeleteRecords or
//                             retention moves the log start.
//   strata-producer-state-gap "0\n<offset>\n": the log was started at this
//                             offset from a leader's word (active-segment
//                             sync), so producers that wrote only below it
//                             are unknown until a remote producer snapshot
//                             is merged (then the file goes).
//   strata-clean-shutdown     empty marker written by Close() and removed by
//                             Open(); its absence means the active segment
//                             must be recovered.
//
// Every read and write goes through `env` (tests pass a FaultInjectingEnv).
//
// Thread-safety: stateless functions.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "base/env.h"
#include "base/result.h"

namespace strata::storage {

inline constexpr std::string_view kLogStartOffsetFile = "strata-log-start-offset";
inline constexpr std::string_view kCleanShutdownFile = "strata-clean-shutdown";
inline constexpr std::string_view kProducerStateGapFile = "strata-producer-state-gap";

// A one-offset state file "0\n<offset>\n" (version line, value), written
// atomically. nullopt when the file is missing; kCorrupt when malformed.
Result<std::optional<int64_t>> ReadOffsetFile(const std::filesystem::path& dir,
                                              std::string_view name, Env* env = Env::Default());
Status WriteOffsetFile(const std::filesystem::path& dir, std::string_view name, int64_t offset,
                       Env* env = Env::Default());

Result<std::optional<int64_t>> ReadLogStartOffset(const std::filesystem::path& dir,
                                                  Env* env = Env::Default());
Status WriteLogStartOffset(const std::filesystem::path& dir, int64_t offset,
                           Env* env = Env::Default());

bool HasCleanShutdownMarker(const std::filesystem::path& dir);
Status WriteCleanShutdownMarker(const std::filesystem::path& dir, Env* env = Env::Default());
Status RemoveCleanShutdownMarker(const std::filesystem::path& dir, Env* env = Env::Default());

}  // namespace strata::storage
