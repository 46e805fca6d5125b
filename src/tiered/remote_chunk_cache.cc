#include "tiered/remote_chunk_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <asio/post.hpp>
#include <filesystem>
#include <optional>

#include "base/log.h"
#include "tiered/logger.h"
#include "tiered/posix_file.h"

namespace strata::tiered {

namespace {
constexpr std::string_view kChunkSuffix = ".chunk";
constexpr std::string_view kTempSuffix = ".chunk.tmp";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Bytes [from, to) of a fetched chunk as a region of the response. A region
// keeps its whole buffer alive until the response is written: a slice of
// less than half the chunk is copied, so a slow consumer pins at most twice
// what it is sent.
FileRegion SliceOf(const std::shared_ptr<const Bytes>& chunk, uint64_t from, uint64_t to) {
  if (2 * (to - from) >= chunk->size()) return FileRegion::Memory(chunk->data() + from, to - from, chunk);
  auto copy = std::make_shared<const Bytes>(chunk->begin() + ptrdiff_t(from),
                                            chunk->begin() + ptrdiff_t(to));
  return FileRegion::Memory(copy->data(), copy->size(), copy);
}
}  // namespace

// One fetch of a chunk that callers missing the same chunk wait for.
struct RemoteChunkCache::Flight {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;       // guarded by mu
  ChunkData data;          // set when the fetch succeeded; guarded by mu
  Error error;             // set when it failed; guarded by mu
  bool readahead = false;  // immutable: started by read-ahead
  // A finished fetch left in flights_, uncached, for the reads that want
  // it; guarded by the cache's mu_.
  bool held = false;
};

RemoteChunkCache::RemoteChunkCache(RemoteChunkCacheOptions options)
    : options_(std::move(options)),
      cancel_(MakeCancelFlag()),
      pool_(static_cast<size_t>(std::max(options_.readahead_threads, 1))) {}

RemoteChunkCache::~RemoteChunkCache() {
  cancel_->store(true);
  pool_.join();
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  write_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void RemoteChunkCache::WriterLoop() {
  // Lowest priority: caching yields to serving (per thread on Linux). Not
  // SCHED_IDLE: on a busy broker that would never cache anything.
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
  std::unique_lock lock(mu_);
  for (;;) {
    write_cv_.wait(lock, [this] { return stopping_ || !writes_.empty() || HeldToWriteLocked(); });
    if (stopping_ && writes_.empty()) return;  // nothing left (held chunks are not written)
    if (writes_.empty()) {
      // Caught up: the chunks held for want of room are written now, oldest first.
      auto [key, flight] = std::move(held_.front());
      held_.pop_front();
      MoveHeldToWritesLocked(key, flight);
    }
    PendingWrite w = std::move(writes_.front());
    writes_.pop_front();
    writing_ = true;
    lock.unlock();
    Admit(w.key, w.data);
    lock.lock();
    writing_ = false;
    if (writes_.empty() && !HeldToWriteLocked()) readahead_idle_.notify_all();
  }
}

void RemoteChunkCache::HoldLocked(const Key& key, const std::shared_ptr<Flight>& flight) {
  flight->held = true;
  held_.emplace_back(key, flight);
  write_cv_.notify_one();  // written once the writer has caught up
  // Bounded: the oldest held chunk goes (a later read fetches it again).
  while (held_.size() > size_t(std::max(options_.max_readahead_inflight, 1))) {
    auto& [old_key, old_flight] = held_.front();
    ReleaseHeldLocked(old_key, old_flight);
    held_.pop_front();
  }
}

void RemoteChunkCache::QueueHeldForWriting(const Key& key, const std::shared_ptr<Flight>& flight) {
  {
    std::lock_guard lock(mu_);
    if (!flight->held || stopping_ || !HasWriteRoomLocked()) return;
    std::erase_if(held_, [&](const auto& h) { return h.second == flight; });
    MoveHeldToWritesLocked(key, flight);
  }
  write_cv_.notify_one();
}

void RemoteChunkCache::MoveHeldToWritesLocked(const Key& key,
                                              const std::shared_ptr<Flight>& flight) {
  flight->held = false;  // stays in flights_ until the writer has it on disk
  writes_.push_back(PendingWrite{key, flight->data});
}

void RemoteChunkCache::ReleaseHeldLocked(const Key& key, const std::shared_ptr<Flight>& flight) {
  if (!flight->held) return;
  flight->held = false;
  auto it = flights_.find(key);
  if (it != flights_.end() && it->second == flight) flights_.erase(it);
}

void RemoteChunkCache::Admit(const Key& key, const ChunkData& data) {
  const uint64_t file_id = next_file_id_.fetch_add(1);
  const bool written = WriteFile(file_id, *data);
  std::vector<uint64_t> unlink;
  {
    std::lock_guard lock(mu_);
    if (written) IndexLocked(key, file_id, data->size(), &unlink);
    flights_.erase(key);  // in the same critical section: a caller sees the entry or the flight
  }
  for (uint64_t id : unlink) ::unlink(FileName(id).c_str());
}

Status RemoteChunkCache::Open() {
  enabled_ = false;
  if (options_.capacity_bytes == 0) return Status::Ok();
  if (options_.dir.empty() || options_.chunk_bytes == 0) {
    return MakeError(Errc::kInvalidArgument, "remote chunk cache needs a directory and chunk size");
  }
  STRATA_RETURN_IF_ERROR(MakeDirs(options_.dir));
  // Chunk names are only meaningful to the in-memory index of the run that
  // wrote them, so whatever an earlier run left is garbage. Only our own file
  // names are removed, in case the directory is shared by mistake.
  std::error_code ec;
  for (const auto& ent : std::filesystem::directory_iterator(options_.dir, ec)) {
    std::string name = ent.path().filename().string();
    if (EndsWith(name, kChunkSuffix) || EndsWith(name, kTempSuffix)) {
      std::filesystem::remove(ent.path(), ec);
    }
  }
  if (ec)
    return MakeError(Errc::kIoError, fmt::format("cleaning {}: {}", options_.dir, ec.message()));
  enabled_ = true;
  if (!writer_.joinable()) writer_ = std::thread([this] { WriterLoop(); });
  Log()->info("remote chunk cache: {} ({} bytes, {} byte chunks, read-ahead {})", options_.dir,
              options_.capacity_bytes, options_.chunk_bytes, options_.readahead_chunks);
  return Status::Ok();
}

Result<Bytes> RemoteChunkCache::Read(RemoteStorage& store, const std::string& path,
                                     uint64_t object_size, uint64_t offset, uint64_t length,
                                     const CallOptions& opts) {
  if (!enabled_) return store.Get(path, offset, length, opts);
  STRATA_ASSIGN_OR_RETURN(RemoteRange range,
                          ReadRange(store, path, object_size, offset, length, opts));
  return range.Gather();
}

Result<RemoteRange> RemoteChunkCache::ReadRange(RemoteStorage& store, const std::string& path,
                                                uint64_t object_size, uint64_t offset,
                                                uint64_t length, const CallOptions& opts) {
  if (!enabled_) {
    STRATA_ASSIGN_OR_RETURN(Bytes got, store.Get(path, offset, length, opts));
    return RemoteRange::OfBytes(offset, std::move(got));
  }
  if (offset > object_size) {
    return MakeError(Errc::kOutOfRange,
                     fmt::format("read {} at {}: past the end ({})", path, offset, object_size));
  }
  const uint64_t end = offset + std::min(length, object_size - offset);
  RemoteRange out(offset);
  if (end == offset) return out;
  const uint64_t c = options_.chunk_bytes;
  const uint64_t first = offset / c, last = (end - 1) / c;
  // Before the foreground reads: the read's other chunks and the read-ahead
  // are fetched while the first one is.
  ScheduleReadAhead(store, path, object_size, first + 1,
                    last + 1 + uint64_t(std::max(options_.readahead_chunks, 0)));
  for (uint64_t k = first; k <= last; ++k) {
    const uint64_t chunk_start = k * c;
    const uint64_t chunk_size = std::min(c, object_size - chunk_start);
    const uint64_t from = std::max(offset, chunk_start) - chunk_start;
    const uint64_t to = std::min(end, chunk_start + chunk_size) - chunk_start;
    STRATA_ASSIGN_OR_RETURN(FileRegion region,
                            ReadChunk(store, Key{path, k}, chunk_size, from, to, opts));
    out.Append(std::move(region));
  }
  return out;
}

Result<FileRegion> RemoteChunkCache::ReadChunk(RemoteStorage& store, const Key& key,
                                               uint64_t chunk_size, uint64_t from, uint64_t to,
                                               const CallOptions& opts) {
  for (int attempt = 0;; ++attempt) {
    std::shared_ptr<Flight> flight;
    bool leader = false;
    std::optional<uint64_t> file_id;
    {
      std::lock_guard lock(mu_);
      if (auto it = entries_.find(key); it != entries_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second.lru);
        file_id = it->second.file_id;
      } else if (auto f = flights_.find(key); f != flights_.end()) {
        flight = f->second;
      } else {
        flight = std::make_shared<Flight>();
        flights_.emplace(key, flight);
        leader = true;
      }
    }
    if (file_id) {
      STRATA_ASSIGN_OR_RETURN(std::optional<FileRegion> region, OpenFile(*file_id, from, to));
      if (region) {
        hits_.fetch_add(1);
        bytes_from_cache_.fetch_add(to - from);
        return std::move(*region);
      }
      std::lock_guard lock(mu_);
      DropEntryLocked(key, *file_id);  // gone or short: a miss, go round again
      continue;
    }
    if (leader) {
      misses_.fetch_add(1);
      STRATA_ASSIGN_OR_RETURN(ChunkData data, FetchAndStore(store, key, chunk_size, flight, opts));
      return SliceOf(data, from, to);
    }
    std::unique_lock lock(flight->mu);
    flight->cv.wait(lock, [&] { return flight->done; });
    if (flight->data) {
      hits_.fetch_add(1);
      coalesced_.fetch_add(1);
      bytes_from_cache_.fetch_add(to - from);
      ChunkData data = flight->data;
      lock.unlock();
      QueueHeldForWriting(key, flight);
      return SliceOf(data, from, to);
    }
    // A failed read-ahead (perhaps cancelled) must not fail a consumer that
    // never asked for it: fetch once ourselves.
    if (flight->readahead && attempt == 0) continue;
    return flight->error;
  }
}

Result<RemoteChunkCache::ChunkData> RemoteChunkCache::FetchAndStore(
    RemoteStorage& store, const Key& key, uint64_t chunk_size,
    const std::shared_ptr<Flight>& flight, const CallOptions& opts) {
  Result<Bytes> got = opts.cancelled()
                          ? Result<Bytes>(MakeError(Errc::kShuttingDown, "cancelled"))
                          : store.Get(key.path, key.chunk * options_.chunk_bytes, chunk_size, opts);
  ChunkData data;
  Error error;
  if (!got.ok()) {
    error = got.take_error();
  } else if (got->size() != chunk_size) {
    error = MakeError(Errc::kCorrupt, fmt::format("{}: chunk {} has {} bytes, expected {}",
                                                  key.path, key.chunk, got->size(), chunk_size));
  } else {
    bytes_fetched_.fetch_add(chunk_size);
    data = std::make_shared<const Bytes>(std::move(got).value());
  }
  // Waiters get the bytes before the chunk file is written (readers that
  // arrive meanwhile find the finished flight and use them too).
  {
    std::lock_guard lock(flight->mu);
    flight->done = true;
    flight->data = data;
    flight->error = error;
  }
  flight->cv.notify_all();
  // The finished flight stays until its chunk is written: callers arriving
  // meanwhile take its bytes instead of fetching them again.
  bool queued = false;
  {
    std::lock_guard lock(mu_);
    if (data && !stopping_ && HasWriteRoomLocked()) {
      writes_.push_back(PendingWrite{key, data});
      queued = true;
    } else if (data && !stopping_) {
      // Not cached: kept a while for the reads that want it (a sequential
      // reader reads a chunk in several fetches, and a read-ahead chunk has
      // not been read at all yet).
      HoldLocked(key, flight);
    } else {
      flights_.erase(key);
    }
  }
  if (queued) {
    write_cv_.notify_one();
  } else if (data) {
    writes_skipped_.fetch_add(1);
  }
  if (!data) return error;
  return data;
}

bool RemoteChunkCache::WriteFile(uint64_t file_id, const Bytes& data) {
  const std::string final_name = FileName(file_id);
  const std::string tmp = final_name + ".tmp";
  // Large chunks go to disk with O_DIRECT, without a copy into the page
  // cache (DirectFileWriter).
  Status st = file_writer_.Write(tmp, data);
  if (st.ok() && ::rename(tmp.c_str(), final_name.c_str()) != 0)
    st = ErrnoError(errno, "rename", tmp);
  if (st.ok()) return true;
  ::unlink(tmp.c_str());
  // The data is still served; only caching it failed (e.g. the disk is full).
  if (write_failures_.fetch_add(1) % 100 == 0) {
    Log()->warn("remote chunk cache: {}", st.error().message);
  }
  return false;
}

Result<std::optional<FileRegion>> RemoteChunkCache::OpenFile(uint64_t file_id, uint64_t from,
                                                             uint64_t to) const {
  const std::string name = FileName(file_id);
  auto fd = std::make_shared<UniqueFd>(::open(name.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd->valid()) {
    if (errno == ENOENT) return std::optional<FileRegion>();
    // Out of descriptors, say: the chunk is fine, this read fails (retriably).
    return MakeError(Errc::kUnavailable, ErrnoError(errno, "open", name).message);
  }
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return ErrnoError(errno, "stat", name);
  if (uint64_t(st.st_size) < to) return std::optional<FileRegion>();
  // Written with O_DIRECT, so not in the page cache: read into it here, on
  // the reader pool, not in sendfile(2) on a network thread.
  (void)::readahead(fd->get(), off_t(from), size_t(to - from));
  return std::optional<FileRegion>(FileRegion{fd->get(), from, to - from, fd});
}

void RemoteChunkCache::IndexLocked(const Key& key, uint64_t file_id, uint64_t size,
                                   std::vector<uint64_t>* unlink) {
  if (size > options_.capacity_bytes || entries_.count(key) != 0) {
    unlink->push_back(file_id);  // cannot be kept (or, defensively, a duplicate)
    return;
  }
  while (current_bytes_ + size > options_.capacity_bytes && !lru_.empty()) {
    auto it = entries_.find(lru_.back());
    unlink->push_back(it->second.file_id);
    current_bytes_ -= it->second.size;
    entries_.erase(it);
    lru_.pop_back();
    evictions_.fetch_add(1);
  }
  lru_.push_front(key);
  entries_.emplace(key, Entry{file_id, size, lru_.begin()});
  current_bytes_ += size;
}

void RemoteChunkCache::DropEntryLocked(const Key& key, uint64_t file_id) {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.file_id != file_id) return;  // already replaced/evicted
  current_bytes_ -= it->second.size;
  lru_.erase(it->second.lru);
  entries_.erase(it);
  ::unlink(FileName(file_id).c_str());
}

void RemoteChunkCache::Prefetch(RemoteStorage& store, const std::string& path, uint64_t object_size,
                                uint64_t first_chunk, uint64_t count) {
  if (!enabled_) return;
  ScheduleReadAhead(store, path, object_size, first_chunk, first_chunk + count);
}

void RemoteChunkCache::ScheduleReadAhead(RemoteStorage& store, const std::string& path,
                                         uint64_t object_size, uint64_t from, uint64_t to) {
  const uint64_t c = options_.chunk_bytes;
  const uint64_t chunks = (object_size + c - 1) / c;
  const uint64_t stop = std::min(chunks, to);
  for (uint64_t k = from; k < stop; ++k) {
    Key key{path, k};
    auto flight = std::make_shared<Flight>();
    flight->readahead = true;
    {
      std::lock_guard lock(mu_);
      if (entries_.count(key) != 0 || flights_.count(key) != 0) continue;
      if (readahead_inflight_ >= options_.max_readahead_inflight) {
        readahead_dropped_.fetch_add(1);
        return;
      }
      flights_.emplace(key, flight);
      ++readahead_inflight_;
    }
    readahead_fetches_.fetch_add(1);
    const uint64_t chunk_size = std::min(c, object_size - k * c);
    asio::post(pool_, [this, &store, key = std::move(key), chunk_size, flight] {
      CallOptions o;
      o.cancel = cancel_;
      if (!FetchAndStore(store, key, chunk_size, flight, o).ok()) readahead_failures_.fetch_add(1);
      std::lock_guard lock(mu_);
      if (--readahead_inflight_ == 0) readahead_idle_.notify_all();
    });
  }
}

void RemoteChunkCache::WaitForReadAhead() {
  std::unique_lock lock(mu_);
  readahead_idle_.wait(lock, [this] {
    return readahead_inflight_ == 0 && writes_.empty() && !HeldToWriteLocked() && !writing_;
  });
}

ChunkCacheCounters RemoteChunkCache::counters() const {
  ChunkCacheCounters c;
  c.hits = hits_.load();
  c.coalesced = coalesced_.load();
  c.misses = misses_.load();
  c.bytes_from_cache = bytes_from_cache_.load();
  c.bytes_fetched = bytes_fetched_.load();
  c.evictions = evictions_.load();
  c.readahead_fetches = readahead_fetches_.load();
  c.readahead_failures = readahead_failures_.load();
  c.readahead_dropped = readahead_dropped_.load();
  c.writes_skipped = writes_skipped_.load();
  c.write_failures = write_failures_.load();
  std::lock_guard lock(mu_);
  c.current_bytes = current_bytes_;
  c.current_chunks = entries_.size();
  return c;
}

std::string RemoteChunkCache::FileName(uint64_t file_id) const {
  return fmt::format("{}/{:016x}{}", options_.dir, file_id, kChunkSuffix);
}

}  // namespace strata::tiered
