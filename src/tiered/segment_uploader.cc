#include "tiered/segment_uploader.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>

#include "protocol/record_batch.h"
#include "storage/file.h"
#include "tiered/remote_chunk_cache.h"

namespace strata::tiered {

namespace fs = std::filesystem;

namespace {

fs::path WithSuffix(const fs::path& log_path, std::string_view suffix) {
  fs::path p = log_path;
  p.replace_extension(std::string(suffix));
  return p;
}

uint32_t ReadBe32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

}  // namespace

uint64_t IndexPositionFor(ByteView index, Offset base, Offset offset) {
  uint64_t pos = 0;
  for (size_t i = 0; i + 8 <= index.size(); i += 8) {
    Offset key = base + int64_t(ReadBe32(index.data() + i));
    if (key >= offset) break;
    pos = ReadBe32(index.data() + i + 4);
  }
  return pos;
}

std::string EpochCheckpointText(const std::vector<std::pair<LeaderEpoch, Offset>>& epochs,
                                Offset end_offset) {
  std::vector<std::pair<LeaderEpoch, Offset>> kept;
  for (const auto& e : epochs) {
    if (e.second <= end_offset) kept.push_back(e);
  }
  std::string text = fmt::format("0\n{}\n", kept.size());
  for (const auto& [epoch, start] : kept) text += fmt::format("{} {}\n", epoch, start);
  return text;
}

Status UploadSegment(RemoteStorage& store, const std::string& dir,
                     const storage::SegmentSummary& local,
                     const std::vector<std::pair<LeaderEpoch, Offset>>& epochs, RemoteSegment* seg,
                     const CallOptions& opts) {
  std::error_code ec;
  if (!fs::exists(local.log_path, ec)) {
    return MakeError(Errc::kNotFound, "local segment gone: " + local.log_path.string());
  }
  // The objects go up in parallel: against HDFS each Put is several round
  // trips (NameNode CREATE, DataNode write, length check, rename), so one
  // segment's five objects one after the other cost most of an upload. The
  // manifest, written after all of them, decides visibility.
  fs::path snapshot = local.log_path.parent_path() /
                      storage::OffsetFileName((local.end_offset + 1).value(), ".snapshot");
  seg->has_snapshot = fs::exists(snapshot, ec);
  // A segment's aborted transactions: read_committed reads of remote data
  // need them. The file exists only once an abort was indexed there, and is
  // complete: the segment is rolled and below the last stable offset.
  const fs::path txn_index = WithSuffix(local.log_path, ".txnindex");
  seg->has_txn_index = fs::file_size(txn_index, ec) > 0 && !ec;
  const std::string epochs_text = EpochCheckpointText(epochs, local.end_offset);
  const ByteView epochs_bytes(reinterpret_cast<const uint8_t*>(epochs_text.data()),
                              epochs_text.size());
  std::vector<std::pair<std::string, PutSource>> puts;
  puts.emplace_back(RemoteObjectPath(dir, *seg, kRemoteIndexExt),
                    PutSource::File(WithSuffix(local.log_path, ".index")));
  puts.emplace_back(RemoteObjectPath(dir, *seg, kRemoteTimeIndexExt),
                    PutSource::File(WithSuffix(local.log_path, ".timeindex")));
  if (seg->has_snapshot) {
    puts.emplace_back(RemoteObjectPath(dir, *seg, kRemoteSnapshotExt),
                      PutSource::File(snapshot.string()));
  }
  if (seg->has_txn_index) {
    puts.emplace_back(RemoteObjectPath(dir, *seg, kRemoteTxnIndexExt),
                      PutSource::File(txn_index.string()));
  }
  puts.emplace_back(RemoteObjectPath(dir, *seg, kRemoteEpochsExt), PutSource::Memory(epochs_bytes));
  std::vector<std::future<Status>> pending;
  for (const auto& put : puts) {
    pending.push_back(std::async(std::launch::async, [&store, &put, &opts] {
      return store.Put(put.first, put.second, opts);
    }));
  }
  Status result = store.Put(RemoteObjectPath(dir, *seg, kRemoteLogExt),
                            PutSource::File(local.log_path.string()), opts);
  for (size_t i = 0; i < pending.size(); ++i) {
    Status st = pending[i].get();  // always wait: the sources must outlive every Put
    if (st.ok() || !result.ok()) continue;
    // The producer snapshot is optional and the log prunes old ones as it
    // rolls: one pruned since the check above just means "no snapshot".
    if (st.error().code == Errc::kNotFound && puts[i].second.file_path == snapshot.string()) {
      seg->has_snapshot = false;
      continue;
    }
    result = st;
  }
  // kNotFound tells the caller the segment is gone (DeleteRecords), and the
  // caller then drops it: only say so when the .log itself is gone.
  if (!result.ok() && result.error().code == Errc::kNotFound && fs::exists(local.log_path, ec)) {
    return MakeError(Errc::kIoError,
                     "uploading " + local.log_path.string() + ": " + result.error().message);
  }
  return result;
}

Status DeleteRemoteSegment(RemoteStorage& store, const std::string& dir, const RemoteSegment& seg,
                           const CallOptions& opts) {
  for (const char* ext : {kRemoteLogExt, kRemoteIndexExt, kRemoteTimeIndexExt, kRemoteSnapshotExt,
                          kRemoteEpochsExt, kRemoteTxnIndexExt}) {
    STRATA_RETURN_IF_ERROR(store.Delete(RemoteObjectPath(dir, seg, ext), false, opts));
  }
  return Status::Ok();
}

Result<Bytes> ReadRemoteSegment(RemoteStorage& store, const std::string& dir,
                                const RemoteSegment& seg, Offset offset, int32_t max_bytes,
                                const CallOptions& opts) {
  if (offset < seg.base_offset || offset > seg.end_offset) {
    return MakeError(Errc::kOutOfRange, fmt::format("offset {} not in remote segment [{}, {}]",
                                                    offset, seg.base_offset, seg.end_offset));
  }
  STRATA_ASSIGN_OR_RETURN(Bytes index,
                          store.Get(RemoteObjectPath(dir, seg, kRemoteIndexExt), 0, kToEnd, opts));
  return ReadRemoteSegmentWithIndex(store, dir, seg, index, offset, max_bytes, opts);
}

Result<Bytes> ReadRemoteSegmentWithIndex(RemoteStorage& store, const std::string& dir,
                                         const RemoteSegment& seg, ByteView index, Offset offset,
                                         int32_t max_bytes, const CallOptions& opts) {
  return ReadRemoteSegmentWithIndex(store, nullptr, dir, seg, index, offset, max_bytes, opts);
}

Result<Bytes> ReadRemoteSegmentWithIndex(RemoteStorage& store, RemoteChunkCache* cache,
                                         const std::string& dir, const RemoteSegment& seg,
                                         ByteView index, Offset offset, int32_t max_bytes,
                                         const CallOptions& opts) {
  STRATA_ASSIGN_OR_RETURN(RemoteRange range, ReadRemoteBatches(store, cache, dir, seg, index,
                                                               offset, max_bytes, kNoOffset, opts));
  return range.Gather();
}

namespace {

// Reads a remote segment's .log for ReadRemoteBatches: a window of it (from
// the chunk cache or a plain Get), and batch headers out of the window
// through a staging buffer (one copy, a pread for a cached chunk, per 64
// KiB rather than per batch).
class LogWindow {
 public:
  LogWindow(RemoteStorage& store, RemoteChunkCache* cache, std::string path, uint64_t size,
            uint64_t at, const CallOptions& opts)
      : store_(store), cache_(cache), path_(std::move(path)), size_(size), opts_(opts), window_(at) {}

  const RemoteRange& range() const { return window_; }
  uint64_t size() const { return size_; }

  // Makes [at, at + len) part of the window, reading at least `read` bytes
  // from `at` (up to the object's end) when it is not.
  Status Ensure(uint64_t at, uint64_t len, uint64_t read) {
    if (at >= window_.begin() && at + len <= window_.end()) return Status::Ok();
    const uint64_t n = std::min(size_ - at, std::max(len, read));
    if (cache_ != nullptr) {
      STRATA_ASSIGN_OR_RETURN(window_, cache_->ReadRange(store_, path_, size_, at, n, opts_));
    } else {
      STRATA_ASSIGN_OR_RETURN(Bytes got, store_.Get(path_, at, n, opts_));
      window_ = RemoteRange::OfBytes(at, std::move(got));
    }
    stage_.clear();
    if (window_.size() < len) return MakeError(Errc::kCorrupt, "remote segment shorter than manifest");
    return Status::Ok();
  }

  // The header of the batch at `pos` (in the window).
  Result<protocol::BatchHeader> HeaderAt(uint64_t pos) {
    const uint64_t end = std::min(window_.end(), pos + protocol::kBatchHeaderSize);
    if (pos < stage_at_ || end > stage_at_ + stage_.size()) {
      stage_.resize(size_t(std::min<uint64_t>(kStageBytes, window_.end() - pos)));
      stage_at_ = pos;
      if (!window_.Copy(pos, MutableByteView(stage_.data(), stage_.size()))) {
        return MakeError(Errc::kIoError, path_ + ": a cached chunk was shorter than indexed");
      }
    }
    return protocol::ParseBatchHeader(ByteView(stage_.data() + (pos - stage_at_), end - pos));
  }

 private:
  static constexpr uint64_t kStageBytes = 64 * 1024;
  RemoteStorage& store_;
  RemoteChunkCache* cache_;
  const std::string path_;
  const uint64_t size_;
  const CallOptions& opts_;
  RemoteRange window_;
  Bytes stage_;
  uint64_t stage_at_ = 0;
};

}  // namespace

Result<RemoteRange> ReadRemoteBatches(RemoteStorage& store, RemoteChunkCache* cache,
                                      const std::string& dir, const RemoteSegment& seg,
                                      ByteView index, Offset offset, int32_t max_bytes,
                                      Offset below, const CallOptions& opts) {
  if (offset < seg.base_offset || offset > seg.end_offset) {
    return MakeError(Errc::kOutOfRange, fmt::format("offset {} not in remote segment [{}, {}]",
                                                    offset, seg.base_offset, seg.end_offset));
  }
  const std::string log_path = RemoteObjectPath(dir, seg, kRemoteLogExt);
  const uint64_t size = uint64_t(seg.size);
  const uint64_t limit = uint64_t(std::max(max_bytes, 0));
  const uint64_t want = limit + 64 * 1024;  // bytes read at once
  uint64_t pos = IndexPositionFor(index, seg.base_offset, offset);
  LogWindow log(store, cache, log_path, size, pos, opts);
  // The first batch holding `offset`: the index points at or before it.
  uint64_t len = 0;
  for (;; pos += len) {
    if (pos >= size) {
      return MakeError(Errc::kCorrupt, fmt::format("offset {} not found in {}", offset, log_path));
    }
    STRATA_RETURN_IF_ERROR(log.Ensure(pos, std::min<uint64_t>(size - pos, protocol::kBatchHeaderSize), want));
    STRATA_ASSIGN_OR_RETURN(protocol::BatchHeader h, log.HeaderAt(pos));
    len = uint64_t(h.size_in_bytes());
    if (h.last_offset() >= offset) break;
  }
  // The answer, in one window from its first batch (whole, even past
  // max_bytes, KIP-74): the batches that fit, and only whole ones below
  // `below` (a follower's high watermark; none, as an empty answer).
  const uint64_t start = pos;
  STRATA_RETURN_IF_ERROR(log.Ensure(start, std::min(size - start, len), want));
  const RemoteRange& window = log.range();
  uint64_t end = start;
  while (pos < size && pos + protocol::kBatchHeaderSize <= window.end()) {
    STRATA_ASSIGN_OR_RETURN(protocol::BatchHeader h, log.HeaderAt(pos));
    len = uint64_t(h.size_in_bytes());
    if (pos > start && pos + len - start > limit) break;
    if (pos + len > window.end()) break;
    if (below >= 0_o && h.last_offset() >= below) break;
    pos += len;
    end = pos;
  }
  return window.Slice(start, end);
}

}  // namespace strata::tiered
