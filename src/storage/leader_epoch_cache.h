#pragma once
// LeaderEpochCache: the partition's (leader epoch -> first offset) history,
// persisted as <dir>/leader-epoch-checkpoint in Kafka's checkpoint text
// format: a version line "0", a count line, then one "epoch startOffset" line
// per entry. Every change rewrites the file (tmp, fsync, rename) through the
// Env given to Load (tests pass a FaultInjectingEnv).
//
// Thread-safety: none; the owning Log's mutex serialises all calls.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "base/env.h"
#include "base/ids.h"
#include "base/offset.h"
#include "base/result.h"

namespace strata::storage {

inline constexpr std::string_view kLeaderEpochCheckpoint = "leader-epoch-checkpoint";

struct EpochEntry {
  LeaderEpoch epoch{0};
  Offset start_offset;
  bool operator==(const EpochEntry&) const = default;
};

class LeaderEpochCache {
 public:
  // Loads <dir>/leader-epoch-checkpoint (missing = empty; malformed = kCorrupt).
  static Result<LeaderEpochCache> Load(const std::filesystem::path& dir, Env* env = Env::Default());

  // Records that `epoch` starts at `start_offset` when it is newer than the
  // latest epoch (entries never go backwards). Persists on change, and keeps
  // the change only once it is persisted: an append whose epoch could not be
  // written (disk full) fails, and its retry writes the epoch again.
  Status Assign(LeaderEpoch epoch, Offset start_offset);
  // Drops entries starting at or after `end_offset` (log truncated there).
  Status TruncateFromEnd(Offset end_offset);
  // Drops every entry (the log restarted empty at a new offset).
  Status Clear();
  // Drops entries wholly below `start_offset`; the epoch covering it is kept
  // with its start moved up to `start_offset` (as Kafka does).
  Status TruncateFromStart(Offset start_offset);

  // Kafka's OffsetsForLeaderEpoch answer: {largest epoch <= requested, start
  // offset of the next higher epoch or log_end_offset for the latest};
  // {kNoLeaderEpoch, kNoOffset} when unknown.
  std::pair<LeaderEpoch, Offset> EndOffsetFor(LeaderEpoch epoch, Offset log_end_offset) const;
  // kNoLeaderEpoch when empty.
  LeaderEpoch latest_epoch() const {
    return entries_.empty() ? kNoLeaderEpoch : entries_.back().epoch;
  }
  const std::vector<EpochEntry>& entries() const { return entries_; }

  static Result<std::vector<EpochEntry>> Parse(std::string_view text);
  std::string Format() const { return Format(entries_); }
  static std::string Format(const std::vector<EpochEntry>& entries);

 private:
  Status Persist() const { return Persist(entries_); }
  Status Persist(const std::vector<EpochEntry>& entries) const;

  std::filesystem::path path_;
  Env* env_ = Env::Default();        // not owned; outlives the cache
  std::vector<EpochEntry> entries_;  // epochs and start offsets increasing
};

}  // namespace strata::storage
