// RemoteLogManager's restoring of producer state: a replica that started its
// log at its leader's active segment (active-segment sync) knows only the
// producers that wrote from there on. Once it leads and the remote segment
// holding the offset just below its start is uploaded (by the leader that
// had it), that segment's producer snapshot completes the state, so a
// retry of a batch written before the move is still recognised as a
// duplicate.
#include "tiered/logger.h"
#include "tiered/remote_log_manager.h"
#include "tiered/remote_log_partition.h"

namespace strata::tiered {

void RemoteLogManager::RestoreProducerStateLocked(TieredPartition& p) {
  const int64_t gap = p.log->producer_state_gap();
  if (gap <= 0) return;
  const RemoteSegment* seg = p.manifest.FindReadable(gap - 1);
  // Not uploaded yet (the next scan looks again), or past what this log
  // holds (it cannot be: a leader holds everything uploaded).
  if (seg == nullptr || seg->end_offset + 1 > p.log->log_end_offset()) return;
  if (!seg->has_snapshot) {
    if (p.load_failures++ % 100 == 0) {
      Log()->warn(
          "{}: the remote segment {}-{} has no producer snapshot: producers that wrote "
          "only below offset {} stay unknown here",
          p.id.name(), seg->base_offset, seg->end_offset, gap);
    }
    return;
  }
  auto data = store().Get(RemoteObjectPath(p.dir, *seg, kRemoteSnapshotExt));
  if (!data.ok()) {
    if (p.load_failures++ % 20 == 0) {
      Log()->warn("{}: reading the producer snapshot of remote segment {}-{}: {}", p.id.name(),
                  seg->base_offset, seg->end_offset, data.error().message);
    }
    return;
  }
  Status merged = p.log->MergeProducerSnapshot(*data, seg->end_offset + 1);
  if (!merged.ok()) {
    Log()->warn("{}: restoring producer state below {}: {}", p.id.name(), gap,
                merged.error().message);
  }
}

}  // namespace strata::tiered
