#include "storage/cleaner_checkpoint.h"

#include "storage/checkpoints.h"

namespace strata::storage {

Result<std::optional<int64_t>> ReadCleanerCheckpoint(const std::filesystem::path& dir, Env* env) {
  return ReadOffsetFile(dir, kCleanerCheckpointFile, env);
}

Status WriteCleanerCheckpoint(const std::filesystem::path& dir, int64_t offset, Env* env) {
  return WriteOffsetFile(dir, kCleanerCheckpointFile, offset, env);
}

}  // namespace strata::storage
