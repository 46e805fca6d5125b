#include "storage/cleaner_checkpoint.h"

#include "storage/checkpoints.h"

namespace strata::storage {

Result<std::optional<int64_t>> ReadCleanerCheckpoint(const std::filesystem::path& dir) {
  return ReadOffsetFile(dir, kCleanerCheckpointFile);
}

Status WriteCleanerCheckpoint(const std::filesystem::path& dir, int64_t offset) {
  return WriteOffsetFile(dir, kCleanerCheckpointFile, offset);
}

}  // namespace strata::storage
