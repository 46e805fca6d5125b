#pragma once
// replication-offset-checkpoint: every partition's high watermark in one
// log directory, in Kafka's checkpoint text format
//   0                        version
//   <n>                      entries
//   <topic> <partition> <offset>   n lines
// rewritten atomically (tmp + fsync + rename) every
// replica.high.watermark.checkpoint.interval.ms and at shutdown, so a
// restarted replica serves what was committed before it stopped. Reads and
// writes go through `env` (tests pass a FaultInjectingEnv).
//
// Thread-safety: stateless functions.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "base/env.h"
#include "base/result.h"

namespace strata::storage {

inline constexpr std::string_view kHighWatermarkCheckpoint = "replication-offset-checkpoint";

using HighWatermarks = std::map<std::pair<std::string, int32_t>, int64_t>;

// Empty when the file is missing; kCorrupt (naming the line) when malformed.
Result<HighWatermarks> ReadHighWatermarks(const std::filesystem::path& log_dir,
                                          Env* env = Env::Default());
Status WriteHighWatermarks(const std::filesystem::path& log_dir, const HighWatermarks& marks,
                           Env* env = Env::Default());

}  // namespace strata::storage
