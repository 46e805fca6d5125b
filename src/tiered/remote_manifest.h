#pragma once
// RemoteManifest: the per-partition record of what remote storage holds
// (<partition dir>/manifest.json on a single broker, manifest-<leader
// epoch>.json in a cluster: each leader writes only its own, so a deposed
// leader's late write never overwrites its successor's). It lists every
// remote segment with its offsets, size, max timestamp, upload uuid and
// KIP-405 state, plus the remote log start offset and the writer's leader
// epoch. It is written whole and atomically (RemoteStorage Put) after every
// state change, so a restart sees a consistent list.
//
// Segments are ordered by (base, end) offset. Two may overlap: replicas roll
// at their own offsets, so a new leader uploads its segment that straddles
// the remote end whole; the bytes they share are identical (both are below
// the high watermark). Once such a segment is COPY_FINISHED, the ones it
// covers are retired (RetireCoveredBy).
//
// Thread-safety: a plain value type; the owner serialises access.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/ids.h"
#include "base/offset.h"
#include "base/result.h"

namespace strata::tiered {

enum class RemoteSegmentState { kCopyStarted, kCopyFinished, kDeleteStarted, kDeleteFinished };
const char* RemoteSegmentStateName(RemoteSegmentState s);

struct RemoteSegment {
  Offset base_offset;
  Offset end_offset;  // last offset in the segment
  int64_t size = 0;   // bytes of the .log
  int64_t max_timestamp = -1;
  std::string uuid;  // names the segment's objects: <20-digit base>-<uuid>.<ext>
  RemoteSegmentState state = RemoteSegmentState::kCopyStarted;
  bool has_snapshot = false;  // a producer snapshot was uploaded
  // Deleted because another segment holds its offsets (RetireCoveredBy) or
  // a new leader abandoned its upload, not because its records expired.
  bool replaced = false;
  bool has_txn_index = false;  // its aborted transactions were uploaded (.txnindex)
};

// File extensions of a remote segment's objects.
inline constexpr const char* kRemoteLogExt = "log";
inline constexpr const char* kRemoteIndexExt = "index";
inline constexpr const char* kRemoteTimeIndexExt = "timeindex";
inline constexpr const char* kRemoteSnapshotExt = "snapshot";
inline constexpr const char* kRemoteEpochsExt = "epochs";
inline constexpr const char* kRemoteTxnIndexExt = "txnindex";

class RemoteManifest {
 public:
  // Segments in offset order (base offsets strictly increasing).
  std::vector<RemoteSegment>& segments() { return segments_; }
  const std::vector<RemoteSegment>& segments() const { return segments_; }

  // The COPY_FINISHED segment holding `offset`, if any.
  const RemoteSegment* FindReadable(Offset offset) const;
  // The segment uploaded from local segment [base, end], if listed and not
  // replaced (a replaced one with the same offsets is uploaded again).
  RemoteSegment* Find(Offset base_offset, Offset end_offset);
  // Inserts in (base, end) order.
  void Insert(RemoteSegment segment);
  // Marks DELETE_STARTED every other COPY_FINISHED segment wholly within
  // `segment`'s offsets; returns how many.
  int RetireCoveredBy(const RemoteSegment& segment);
  // First offset of the first COPY_FINISHED segment; kNoOffset when none.
  Offset remote_log_start_offset() const;
  // Last offset held by a COPY_FINISHED segment; kNoOffset when none.
  Offset remote_log_end_offset() const;
  // Total .log bytes of COPY_FINISHED segments.
  int64_t remote_bytes() const;
  // Drops DELETE_FINISHED entries (their objects are gone).
  size_t PruneDeleted();

  // The leader epoch of the leader that wrote it; kNoLeaderEpoch on a
  // single broker.
  LeaderEpoch leader_epoch() const { return leader_epoch_; }
  void set_leader_epoch(LeaderEpoch epoch) { leader_epoch_ = epoch; }

  Bytes Serialize() const;
  static Result<RemoteManifest> Parse(ByteView json);

 private:
  std::vector<RemoteSegment> segments_;
  LeaderEpoch leader_epoch_ = kNoLeaderEpoch;
};

// The manifest's object name: "manifest.json" for kNoLeaderEpoch (a single
// broker), else "manifest-<epoch>.json".
std::string ManifestName(LeaderEpoch leader_epoch);

// "<topic>-<partition>-<topic id base64>": a partition's directory in the store.
std::string RemotePartitionDir(const std::string& topic, int32_t partition,
                               const std::string& topic_id_base64);
// "<dir>/<20-digit base>-<uuid>.<ext>".
std::string RemoteObjectPath(const std::string& dir, const RemoteSegment& seg, const char* ext);
// A random uuid in Kafka's text form (URL-safe base64, 22 chars).
std::string RandomUuidBase64();

}  // namespace strata::tiered
