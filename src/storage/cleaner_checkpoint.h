#pragma once
// The cleaner checkpoint of one partition: the first offset not yet cleaned
// (Kafka's cleaner-offset-checkpoint entry, which Kafka keeps per log
// directory). Strata keeps it in the partition directory as
//   strata-cleaner-offset   "0\n<offset>\n"   (version line, value)
// rewritten atomically after every cleaning pass. Kafka tools ignore it.
//
// Reads and writes go through `env` (tests pass a FaultInjectingEnv).
//
// Thread-safety: stateless functions.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "base/env.h"
#include "base/result.h"

namespace strata::storage {

inline constexpr std::string_view kCleanerCheckpointFile = "strata-cleaner-offset";

// nullopt when the file is missing; kCorrupt when malformed.
Result<std::optional<int64_t>> ReadCleanerCheckpoint(const std::filesystem::path& dir,
                                                     Env* env = Env::Default());
Status WriteCleanerCheckpoint(const std::filesystem::path& dir, int64_t offset,
                              Env* env = Env::Default());

}  // namespace strata::storage
