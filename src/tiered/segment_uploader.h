#pragma once
// Uploading one rolled local segment, and reading records back from a remote
// one. These are the blocking primitives the RemoteLogManager runs on its
// copier and reader threads.
//
// Thread-safety: free functions; concurrent calls on different segments are
// fine (RemoteStorage is thread-safe).
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "base/bytes.h"
#include "base/ids.h"
#include "base/offset.h"
#include "base/result.h"
#include "storage/log.h"
#include "tiered/remote_manifest.h"
#include "tiered/remote_range.h"
#include "tiered/remote_storage.h"

namespace strata::tiered {

class RemoteChunkCache;

// Uploads the segment's .log, .index, .timeindex, the producer snapshot at
// its end (when present; sets seg->has_snapshot) and its leader-epoch
// entries (`epochs`: epoch, start offset) up to its end, as
// RemoteObjectPath(dir, *seg, ext). Re-running overwrites (Put is atomic).
// kNotFound when the local .log is gone.
Status UploadSegment(RemoteStorage& store, const std::string& dir,
                     const storage::SegmentSummary& local,
                     const std::vector<std::pair<LeaderEpoch, Offset>>& epochs, RemoteSegment* seg,
                     const CallOptions& opts = {});

// Deletes every object of `seg` (missing objects are fine).
Status DeleteRemoteSegment(RemoteStorage& store, const std::string& dir, const RemoteSegment& seg,
                           const CallOptions& opts = {});

// Whole batches from the remote segment `seg`, the first one containing
// `offset`, up to max_bytes (always at least that first batch). Uses the
// remote offset index to find where to start, then ranged Gets of the .log.
// kOutOfRange when the segment does not hold `offset`.
Result<Bytes> ReadRemoteSegment(RemoteStorage& store, const std::string& dir,
                                const RemoteSegment& seg, Offset offset, int32_t max_bytes,
                                const CallOptions& opts = {});
// The .log position to start scanning for `offset` in a remote segment: the
// last entry of its .index whose offset is below it (entries map a batch's
// last offset to the batch's position), else 0.
uint64_t IndexPositionFor(ByteView index, Offset base, Offset offset);
// The same with the segment's remote .index already in hand (cached).
Result<Bytes> ReadRemoteSegmentWithIndex(RemoteStorage& store, const std::string& dir,
                                         const RemoteSegment& seg, ByteView index, Offset offset,
                                         int32_t max_bytes, const CallOptions& opts = {});
// The same reading the .log through `cache` (null: straight from the store).
Result<Bytes> ReadRemoteSegmentWithIndex(RemoteStorage& store, RemoteChunkCache* cache,
                                         const std::string& dir, const RemoteSegment& seg,
                                         ByteView index, Offset offset, int32_t max_bytes,
                                         const CallOptions& opts = {});
// The same batches as regions of the .log, read through `cache` (null:
// straight from the store), with no copy of the records; `below` (unless
// kNoOffset) also ends the answer before the first batch reaching it, which
// may leave it empty.
Result<RemoteRange> ReadRemoteBatches(RemoteStorage& store, RemoteChunkCache* cache,
                                      const std::string& dir, const RemoteSegment& seg,
                                      ByteView index, Offset offset, int32_t max_bytes,
                                      Offset below, const CallOptions& opts = {});

// Kafka's leader-epoch checkpoint text for the entries starting at or below
// `end_offset`.
std::string EpochCheckpointText(const std::vector<std::pair<LeaderEpoch, Offset>>& epochs,
                                Offset end_offset);

}  // namespace strata::tiered
