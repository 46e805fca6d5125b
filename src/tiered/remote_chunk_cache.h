#pragma once
// RemoteChunkCache: an on-disk cache of fixed-size chunks of immutable remote
// objects (the .log objects of remote segments), so consumers re-reading old
// data do not go to the remote store for every fetch, with read-ahead so a
// sequential consumer finds the next chunks already on local disk.
//
//  - Chunk k of an object covers [k * chunk_bytes, (k + 1) * chunk_bytes); the
//    last one may be shorter. Each cached chunk is one file `<id>.chunk` in the
//    cache directory, written to `<id>.chunk.tmp` and renamed; the in-memory
//    index is the only authority (files are wiped by Open), so a file that is
//    missing or short is simply a miss.
//  - The cached bytes are bounded by capacity_bytes (LRU eviction); 0
//    disables the cache and every Read goes straight to the store.
//  - Concurrent misses of one chunk share one store Get (single flight).
//  - A fetched chunk is served at once and written to its file afterwards,
//    by one writer thread at the lowest CPU priority (with O_DIRECT, not
//    through the page cache) from a queue of at most
//    max_pending_writes chunks; a chunk that finds the queue full is served
//    but not cached yet: it is kept in memory for the next reads of it (at
//    most max_readahead_inflight such chunks, the oldest dropped first), and
//    written once the writer has caught up (or queued by a read of it that
//    finds room). While the broker has CPU to spare everything is cached;
//    a cold scan on a busy broker is not slowed by caching what it reads once.
//  - A Read touching chunks [a, b] of an object fetches chunks a+1..b+N that
//    are neither cached nor in flight in the background (N =
//    readahead_chunks) while it reads chunk a itself: the chunks of one read
//    arrive in parallel, and a sequential reader finds the next ones ready.
//    Prefetch does the same for chunks a caller knows will be read next (the
//    start of the next segment). Background fetches run on a small pool with
//    at most max_readahead_inflight at a time (further requests are dropped,
//    and read in the foreground if wanted). Read-ahead errors are only
//    counted.
//
// Objects must be immutable: a path must always name the same bytes (remote
// segment names include a uuid).
//
// Thread-safety: every method is safe from any thread. Stores passed to Read
// must outlive the cache (read-ahead keeps using them until the destructor).
#include <algorithm>
#include <asio/thread_pool.hpp>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "tiered/direct_file_writer.h"
#include "tiered/remote_range.h"
#include "tiered/remote_storage.h"

namespace strata::tiered {

struct RemoteChunkCacheOptions {
  std::string dir;                  // where chunk files live; created by Open
  uint64_t capacity_bytes = 0;      // 0 = disabled
  uint64_t chunk_bytes = 4 << 20;   // fixed chunk size
  int readahead_chunks = 2;         // chunks fetched ahead of each read
  int readahead_threads = 8;        // background fetch threads
  // Read-ahead fetches queued or running at once; also the number of fetched
  // chunks held in memory for want of room in the write queue.
  int max_readahead_inflight = 16;
  int max_pending_writes = 8;       // fetched chunks waiting for the writer
};

struct ChunkCacheCounters {
  uint64_t hits = 0;       // chunk reads that issued no store Get (on disk, or joined a fetch)
  uint64_t coalesced = 0;  // of the hits, those that waited for another caller's fetch
  uint64_t misses = 0;     // chunk reads that fetched the chunk from the store
  uint64_t bytes_from_cache = 0;  // bytes returned by Read without a store Get of their own
  uint64_t bytes_fetched = 0;     // bytes fetched from the store (foreground and read-ahead)
  uint64_t evictions = 0;
  uint64_t readahead_fetches = 0;   // read-ahead Gets started
  uint64_t readahead_failures = 0;  // of those, failed (ignored)
  uint64_t readahead_dropped = 0;   // read-ahead requests over max_readahead_inflight
  uint64_t write_failures = 0;      // chunks fetched but not written to disk
  uint64_t writes_skipped = 0;      // fetched chunks not queued for writing (the writer was
                                    // behind): held in memory, written later if it catches up
  uint64_t current_bytes = 0;       // bytes of cached chunks
  uint64_t current_chunks = 0;
};

class RemoteChunkCache {
 public:
  explicit RemoteChunkCache(RemoteChunkCacheOptions options);
  ~RemoteChunkCache();  // cancels and waits for read-ahead
  RemoteChunkCache(const RemoteChunkCache&) = delete;
  RemoteChunkCache& operator=(const RemoteChunkCache&) = delete;

  // Creates the directory and removes chunk files left by an earlier run
  // (only `*.chunk` / `*.chunk.tmp`). On failure the cache stays disabled.
  Status Open();
  bool enabled() const { return enabled_; }

  // Exactly what store.Get(path, offset, length, opts) returns for an object
  // of `object_size` bytes: min(length, size - offset) bytes; offset > size is
  // kOutOfRange. A store that returns fewer bytes than object_size promises is
  // kCorrupt (and nothing is cached).
  Result<Bytes> Read(RemoteStorage& store, const std::string& path, uint64_t object_size,
                     uint64_t offset, uint64_t length, const CallOptions& opts = {});
  // The same bytes as regions: cached chunks in their files (kept open by
  // the range, so an eviction meanwhile does not take them away), fetched
  // chunks in their buffers. Nothing is copied.
  Result<RemoteRange> ReadRange(RemoteStorage& store, const std::string& path, uint64_t object_size,
                                uint64_t offset, uint64_t length, const CallOptions& opts = {});

  // Fetches chunks [first_chunk, first_chunk + count) of `path` in the
  // background, unless cached or in flight (no-op when the cache is off).
  void Prefetch(RemoteStorage& store, const std::string& path, uint64_t object_size,
                uint64_t first_chunk, uint64_t count);

  // Blocks until no read-ahead is queued or running and every queued chunk
  // is written (tests).
  void WaitForReadAhead();
  ChunkCacheCounters counters() const;
  const RemoteChunkCacheOptions& options() const { return options_; }

 private:
  struct Key {
    std::string path;
    uint64_t chunk = 0;
    bool operator<(const Key& o) const {
      return chunk != o.chunk ? chunk < o.chunk : path < o.path;
    }
  };
  struct Entry {
    uint64_t file_id = 0;
    uint64_t size = 0;
    std::list<Key>::iterator lru;
  };
  struct Flight;
  using ChunkData = std::shared_ptr<const Bytes>;

  // Bytes [from, to) of chunk `key` (of `chunk_size` bytes).
  Result<FileRegion> ReadChunk(RemoteStorage& store, const Key& key, uint64_t chunk_size,
                               uint64_t from, uint64_t to, const CallOptions& opts);
  // [from, to) of a cached chunk file, held open (and read ahead into the
  // page cache); nullopt when it is gone or short, an error when it cannot be
  // opened now (out of descriptors: the entry stays).
  Result<std::optional<FileRegion>> OpenFile(uint64_t file_id, uint64_t from, uint64_t to) const;
  // Fetches the chunk as the flight's leader, stores it and completes the flight.
  Result<ChunkData> FetchAndStore(RemoteStorage& store, const Key& key, uint64_t chunk_size,
                                  const std::shared_ptr<Flight>& flight, const CallOptions& opts);
  // Writes `data` to the chunk file `file_id` (temp name, then rename).
  bool WriteFile(uint64_t file_id, const Bytes& data);
  // The writer thread: writes queued chunks, indexes them, ends their flights.
  void WriterLoop();
  // Writes and indexes one fetched chunk, then ends its flight.
  void Admit(const Key& key, const ChunkData& data);
  // Keeps a finished fetch that could not be cached in flights_ for the reads
  // that want it (at most max_readahead_inflight such chunks, oldest out).
  void HoldLocked(const Key& key, const std::shared_ptr<Flight>& flight);
  void ReleaseHeldLocked(const Key& key, const std::shared_ptr<Flight>& flight);
  // Held chunks the writer takes once it has caught up (none when the
  // queue has no room at all).
  bool HeldToWriteLocked() const { return !held_.empty() && options_.max_pending_writes > 0; }
  bool HasWriteRoomLocked() const {
    return writes_.size() < size_t(std::max(options_.max_pending_writes, 0));
  }
  // Takes a held chunk (already out of held_) to the write queue.
  void MoveHeldToWritesLocked(const Key& key, const std::shared_ptr<Flight>& flight);
  // A held chunk read again goes to the writer if it has room now.
  void QueueHeldForWriting(const Key& key, const std::shared_ptr<Flight>& flight);
  // Indexes a written chunk file, evicting LRU chunks to stay within the
  // capacity; files to unlink (evicted, or this one if it cannot be kept) are
  // added to *unlink.
  void IndexLocked(const Key& key, uint64_t file_id, uint64_t size, std::vector<uint64_t>* unlink);
  void DropEntryLocked(const Key& key, uint64_t file_id);
  // Background fetches of chunks [from, to) of `path` (to capped at its end).
  void ScheduleReadAhead(RemoteStorage& store, const std::string& path, uint64_t object_size,
                         uint64_t from, uint64_t to);
  std::string FileName(uint64_t file_id) const;

  const RemoteChunkCacheOptions options_;
  bool enabled_ = false;
  CancelFlag cancel_;  // set by the destructor: in-flight read-ahead gives up

  mutable std::mutex mu_;
  std::map<Key, Entry> entries_;                    // guarded by mu_
  std::list<Key> lru_;                              // most recent first; guarded by mu_
  std::map<Key, std::shared_ptr<Flight>> flights_;  // guarded by mu_
  uint64_t current_bytes_ = 0;                      // guarded by mu_
  int readahead_inflight_ = 0;                      // guarded by mu_
  std::condition_variable readahead_idle_;          // also: the write queue went empty
  struct PendingWrite {
    Key key;
    ChunkData data;
  };
  std::deque<PendingWrite> writes_;                           // guarded by mu_
  std::deque<std::pair<Key, std::shared_ptr<Flight>>> held_;  // oldest first; guarded by mu_
  bool writing_ = false;   // a write is under way; guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  std::condition_variable write_cv_;
  std::thread writer_;
  DirectFileWriter file_writer_;  // the writer thread's

  std::atomic<uint64_t> next_file_id_{0};
  asio::thread_pool pool_;
  std::atomic<uint64_t> hits_{0}, coalesced_{0}, misses_{0}, bytes_from_cache_{0};
  std::atomic<uint64_t> bytes_fetched_{0}, evictions_{0}, readahead_fetches_{0};
  std::atomic<uint64_t> readahead_failures_{0}, readahead_dropped_{0}, write_failures_{0};
  std::atomic<uint64_t> writes_skipped_{0};
};

}  // namespace strata::tiered
