// Tests of RemoteChunkCache (exact bytes, LRU bound, single flight,
// read-ahead, failures) and of remote reads through it in RemoteLogManager.
#include "tiered/remote_chunk_cache.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "storage/test_util.h"
#include "tiered/remote_log_manager.h"
#include "tiered/test_util.h"
#include "tiered/tiered_log_test_util.h"

namespace strata::tiered {
namespace {

namespace fs = std::filesystem;
using testing::RandomBytes;
using testing::TempDir;

// Counts Gets; can delay them or fail them all.
class CountingStorage : public testing::ForwardingStorage {
 public:
  explicit CountingStorage(std::unique_ptr<RemoteStorage> inner)
      : ForwardingStorage(inner.get()), owned_(std::move(inner)) {}
  using RemoteStorage::Get;
  Result<Bytes> Get(std::string_view p, uint64_t off, uint64_t len, const CallOptions& o) override {
    gets.fetch_add(1);
    if (delay_ms.load() > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms.load()));
    if (fail.load()) return MakeError(Errc::kUnavailable, "store down");
    return inner_->Get(p, off, len, o);
  }

  std::atomic<int> gets{0};
  std::atomic<int> delay_ms{0};
  std::atomic<bool> fail{false};

 private:
  std::unique_ptr<RemoteStorage> owned_;
};

std::unique_ptr<CountingStorage> MakeStore(const TempDir& dir) {
  auto fs_store = OpenRemoteStorage("file://" + dir.path());
  STRATA_CHECK(fs_store.ok(), "open store");
  return std::make_unique<CountingStorage>(std::move(fs_store).value());
}

// Bytes of the *.chunk files in `dir`.
uint64_t ChunkFileBytes(const std::string& dir, int* files = nullptr) {
  uint64_t total = 0;
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.find(".chunk") == std::string::npos) continue;
    total += e.file_size();
    ++n;
  }
  if (files) *files = n;
  return total;
}

class RemoteChunkCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = MakeStore(remote_); }

  std::unique_ptr<RemoteChunkCache> MakeCache(uint64_t capacity, uint64_t chunk, int readahead,
                                              const std::string& name = "cache") {
    RemoteChunkCacheOptions o;
    o.dir = cache_dir_.path() + "/" + name;
    o.capacity_bytes = capacity;
    o.chunk_bytes = chunk;
    o.readahead_chunks = readahead;
    auto c = std::make_unique<RemoteChunkCache>(o);
    EXPECT_TRUE(c->Open().ok());
    return c;
  }

  Bytes PutObject(const std::string& path, size_t size, uint64_t seed) {
    Bytes b = RandomBytes(size, seed);
    EXPECT_TRUE(store_->Put(path, PutSource::Memory(b)).ok());
    return b;
  }

  TempDir remote_, cache_dir_;
  std::unique_ptr<CountingStorage> store_;  // declared before any cache: outlives it
};

TEST_F(RemoteChunkCacheTest, BytesMatchDirectGetForRandomRanges) {
  const uint64_t size = 10 * 1000 + 337;  // last chunk partial
  Bytes obj = PutObject("t/a.log", size, 1);
  auto cache = MakeCache(1 << 20, 1000, 2);
  std::mt19937_64 rng(42);
  for (int i = 0; i < 400; ++i) {
    uint64_t off = rng() % (size + 1);
    uint64_t len = i % 10 == 0 ? kToEnd : rng() % 3500;
    auto got = cache->Read(*store_, "t/a.log", size, off, len);
    auto want = store_->Get("t/a.log", off, len);
    ASSERT_TRUE(got.ok() && want.ok()) << off << "+" << len;
    ASSERT_EQ(*got, *want) << off << "+" << len;
  }
  EXPECT_EQ(*cache->Read(*store_, "t/a.log", size, size - 337, kToEnd),
            Bytes(obj.end() - 337, obj.end()));
  EXPECT_TRUE(cache->Read(*store_, "t/a.log", size, size, 10)->empty());
  EXPECT_EQ(cache->Read(*store_, "t/a.log", size, size + 1, 10).error().code, Errc::kOutOfRange);
  // Everything is cached or held now: a full read is all hits and costs no
  // Get, and once the writer has caught up every chunk is on disk.
  cache->WaitForReadAhead();
  const int gets = store_->gets.load();
  const auto before = cache->counters();
  EXPECT_EQ(*cache->Read(*store_, "t/a.log", size, 0, kToEnd), obj);
  EXPECT_EQ(store_->gets.load(), gets);
  EXPECT_EQ(cache->counters().hits - before.hits, 11u);
  EXPECT_EQ(cache->counters().misses, before.misses);
  // (Held chunks go to the writer as they are read again, as many at a time
  // as its queue takes.)
  for (int pass = 0; pass < 2; ++pass) {
    cache->WaitForReadAhead();
    EXPECT_EQ(*cache->Read(*store_, "t/a.log", size, 0, kToEnd), obj);
  }
  cache->WaitForReadAhead();
  EXPECT_EQ(store_->gets.load(), gets);
  EXPECT_EQ(cache->counters().current_bytes, size);
  EXPECT_EQ(ChunkFileBytes(cache->options().dir), size);
}

TEST_F(RemoteChunkCacheTest, LruEvictionKeepsTheBound) {
  const uint64_t size = 8000;
  Bytes a = PutObject("a.log", size, 2);
  Bytes b = PutObject("b.log", size, 3);
  auto cache = MakeCache(3500, 1000, 0);  // room for 3 chunks
  // (Each read waits for its chunk to be written: the writer runs behind the reads.)
  auto read = [&](uint64_t offset) {
    ASSERT_TRUE(cache->Read(*store_, "a.log", size, offset, 1).ok());
    cache->WaitForReadAhead();
  };
  for (uint64_t k : {0, 1, 2}) read(k * 1000);
  read(0);     // chunk 0 is now the newest
  read(3000);  // evicts chunk 1
  EXPECT_EQ(cache->counters().evictions, 1u);
  int gets = store_->gets.load();
  ASSERT_TRUE(cache->Read(*store_, "a.log", size, 0, 1).ok());
  EXPECT_EQ(store_->gets.load(), gets);  // chunk 0 kept
  ASSERT_TRUE(cache->Read(*store_, "a.log", size, 1000, 1).ok());
  EXPECT_EQ(store_->gets.load(), gets + 1);  // chunk 1 was the one evicted

  // Random reads over two objects with read-ahead: never above the bound.
  auto ra = MakeCache(3500, 1000, 2, "cache2");
  std::mt19937_64 rng(7);
  for (int i = 0; i < 300; ++i) {
    const bool use_a = rng() % 2 == 0;
    uint64_t off = rng() % size, len = rng() % 2500;
    auto got = ra->Read(*store_, use_a ? "a.log" : "b.log", size, off, len);
    ASSERT_TRUE(got.ok());
    const Bytes& src = use_a ? a : b;
    uint64_t end = std::min(size, off + len);
    ASSERT_EQ(*got, Bytes(src.begin() + int64_t(off), src.begin() + int64_t(end)));
    ASSERT_LE(ra->counters().current_bytes, 3500u);
    if (i % 2 == 0) ra->WaitForReadAhead();  // the writer keeps up: chunks are evicted
  }
  ra->WaitForReadAhead();
  EXPECT_LE(ra->counters().current_bytes, 3500u);
  EXPECT_EQ(ChunkFileBytes(ra->options().dir), ra->counters().current_bytes);
  EXPECT_GT(ra->counters().evictions, 50u);
}

// With no room in the write queue nothing is cached: fetched chunks are
// served, and the last max_readahead_inflight of them are kept in memory for
// the reads that follow.
TEST_F(RemoteChunkCacheTest, ChunksTheWriterCannotTakeAreServedUncached) {
  const uint64_t size = 6000;
  Bytes obj = PutObject("w.log", size, 9);
  RemoteChunkCacheOptions o;
  o.dir = cache_dir_.path() + "/small-queue";
  o.capacity_bytes = 1 << 20;
  o.chunk_bytes = 1000;
  o.readahead_chunks = 0;
  o.max_readahead_inflight = 4;
  o.max_pending_writes = 0;  // never any room: nothing is cached
  RemoteChunkCache cache(o);
  ASSERT_TRUE(cache.Open().ok());
  for (uint64_t k = 0; k < 6; ++k) {  // one chunk at a time: held in this order
    ASSERT_EQ(*cache.Read(*store_, "w.log", size, k * 1000, 1000),
              Bytes(obj.begin() + int64_t(k * 1000), obj.begin() + int64_t(k * 1000 + 1000)));
  }
  cache.WaitForReadAhead();
  EXPECT_EQ(cache.counters().writes_skipped, 6u);
  EXPECT_EQ(cache.counters().current_bytes, 0u);
  EXPECT_EQ(store_->gets.load(), 6);
  // Chunks 2-5 are held: read again without a Get, twice.
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(*cache.Read(*store_, "w.log", size, 2500, 3000),
              Bytes(obj.begin() + 2500, obj.begin() + 5500));
  }
  EXPECT_EQ(store_->gets.load(), 6);
  // Chunk 0 was pushed out: fetched again.
  ASSERT_EQ(*cache.Read(*store_, "w.log", size, 0, 10), Bytes(obj.begin(), obj.begin() + 10));
  EXPECT_EQ(store_->gets.load(), 7);
  EXPECT_EQ(cache.counters().current_bytes, 0u);
}

TEST_F(RemoteChunkCacheTest, ConcurrentMissesShareOneGet) {
  const uint64_t size = 5000;
  Bytes obj = PutObject("o.log", size, 4);
  auto cache = MakeCache(1 << 20, 1000, 0);
  store_->delay_ms = 100;  // all threads arrive while the first Get is running
  constexpr int kThreads = 8;
  std::vector<Bytes> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto r = cache->Read(*store_, "o.log", size, 1000 + uint64_t(i) * 10, 500);
      if (r.ok()) results[size_t(i)] = std::move(r).value();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(store_->gets.load(), 1);
  for (int i = 0; i < kThreads; ++i) {
    const int64_t off = 1000 + i * 10;
    EXPECT_EQ(results[size_t(i)], Bytes(obj.begin() + off, obj.begin() + off + 500)) << i;
  }
  auto c = cache->counters();
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.hits, uint64_t(kThreads - 1));
  EXPECT_EQ(c.coalesced, uint64_t(kThreads - 1));
  EXPECT_EQ(c.bytes_fetched, 1000u);
}

TEST_F(RemoteChunkCacheTest, ConcurrentReadsWithEvictionReturnExactBytes) {
  const uint64_t size = 9500;
  std::vector<Bytes> objs;
  for (int i = 0; i < 3; ++i) objs.push_back(PutObject(fmt::format("c{}.log", i), size, 20 + i));
  auto cache = MakeCache(5000, 1000, 2);  // far smaller than the data: constant eviction
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      for (int i = 0; i < 200; ++i) {
        const size_t o = rng() % objs.size();
        const uint64_t off = rng() % size, len = rng() % 3000;
        auto r = cache->Read(*store_, fmt::format("c{}.log", o), size, off, len);
        const uint64_t end = std::min(size, off + len);
        if (!r.ok() ||
            *r != Bytes(objs[o].begin() + int64_t(off), objs[o].begin() + int64_t(end))) {
          bad.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  cache->WaitForReadAhead();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_LE(cache->counters().current_bytes, 5000u);
  EXPECT_EQ(ChunkFileBytes(cache->options().dir), cache->counters().current_bytes);
  EXPECT_GT(cache->counters().hits, 0u);
}

TEST_F(RemoteChunkCacheTest, ReadAheadMakesTheNextSequentialReadAHit) {
  const uint64_t size = 4500;  // chunks 0..4, the last 500 bytes
  Bytes obj = PutObject("s.log", size, 5);
  auto cache = MakeCache(1 << 20, 1000, 2);
  ASSERT_EQ(*cache->Read(*store_, "s.log", size, 0, 1000), Bytes(obj.begin(), obj.begin() + 1000));
  cache->WaitForReadAhead();
  EXPECT_EQ(store_->gets.load(), 3);  // chunk 0 and read-ahead of 1, 2
  EXPECT_EQ(cache->counters().readahead_fetches, 2u);
  // The sequential next read is a hit; it reads ahead chunk 3.
  ASSERT_EQ(*cache->Read(*store_, "s.log", size, 1000, 1000),
            Bytes(obj.begin() + 1000, obj.begin() + 2000));
  EXPECT_EQ(cache->counters().hits, 1u);
  EXPECT_EQ(cache->counters().misses, 1u);
  cache->WaitForReadAhead();
  EXPECT_EQ(store_->gets.load(), 4);
  // Reading on to the end: every read a hit, and nothing past the last chunk.
  for (uint64_t off = 2000; off < size; off += 1000) {
    ASSERT_EQ(*cache->Read(*store_, "s.log", size, off, 1000),
              Bytes(obj.begin() + int64_t(off), obj.begin() + int64_t(std::min(size, off + 1000))));
    cache->WaitForReadAhead();
  }
  auto c = cache->counters();
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.hits, 4u);
  EXPECT_EQ(c.readahead_fetches, 4u);
  EXPECT_EQ(c.readahead_failures, 0u);
  EXPECT_EQ(store_->gets.load(), 5);
  EXPECT_EQ(c.bytes_fetched, size);
}

// Store Gets in flight at once, and the most seen.
class ConcurrencyProbe : public CountingStorage {
 public:
  using CountingStorage::CountingStorage;
  using RemoteStorage::Get;
  Result<Bytes> Get(std::string_view p, uint64_t off, uint64_t len, const CallOptions& o) override {
    const int now = ++running_;
    int seen = max_running.load();
    while (now > seen && !max_running.compare_exchange_weak(seen, now)) {
    }
    auto got = CountingStorage::Get(p, off, len, o);
    --running_;
    return got;
  }
  std::atomic<int> max_running{0};

 private:
  std::atomic<int> running_{0};
};

// The chunks of one read are fetched at once, not one after another: a read
// of a cold range waits for about one store round trip, not one per chunk.
TEST_F(RemoteChunkCacheTest, TheChunksOfOneReadAreFetchedInParallel) {
  const uint64_t size = 4000;  // chunks 0..3
  Bytes obj = PutObject("p.log", size, 6);
  auto fs_store = OpenRemoteStorage("file://" + remote_.path());
  ASSERT_TRUE(fs_store.ok());
  ConcurrencyProbe probe(std::move(fs_store).value());
  probe.delay_ms = 50;  // long enough for the fetches to overlap
  auto cache = MakeCache(1 << 20, 1000, 0);
  ASSERT_EQ(*cache->Read(probe, "p.log", size, 0, kToEnd), obj);
  cache->WaitForReadAhead();
  EXPECT_EQ(probe.gets.load(), 4);
  EXPECT_GE(probe.max_running.load(), 3) << "chunks fetched one after another";
  // And each chunk once: all cached now.
  ASSERT_EQ(*cache->Read(probe, "p.log", size, 500, 3000),
            Bytes(obj.begin() + 500, obj.begin() + 3500));
  EXPECT_EQ(probe.gets.load(), 4);
}

// A caller that knows what comes next (the next segment) prefetches it: the
// read of it is then served without a store Get of its own.
TEST_F(RemoteChunkCacheTest, PrefetchedChunksAreHits) {
  const uint64_t size = 2500;
  Bytes obj = PutObject("n.log", size, 7);
  auto cache = MakeCache(1 << 20, 1000, 0);
  cache->Prefetch(*store_, "n.log", size, 0, 2);
  cache->WaitForReadAhead();
  EXPECT_EQ(store_->gets.load(), 2);
  ASSERT_EQ(*cache->Read(*store_, "n.log", size, 0, 2000), Bytes(obj.begin(), obj.begin() + 2000));
  EXPECT_EQ(store_->gets.load(), 2);
  EXPECT_EQ(cache->counters().misses, 0u);
  cache->Prefetch(*store_, "n.log", size, 2, 10);  // capped at the object's last chunk
  cache->WaitForReadAhead();
  EXPECT_EQ(store_->gets.load(), 3);
}

TEST_F(RemoteChunkCacheTest, FailingStoreSurfacesTheErrorAndCachesNothing) {
  const uint64_t size = 3000;
  Bytes obj = PutObject("f.log", size, 6);
  auto cache = MakeCache(1 << 20, 1000, 2);
  store_->fail = true;
  auto r = cache->Read(*store_, "f.log", size, 100, 200);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::kUnavailable);
  cache->WaitForReadAhead();
  auto c = cache->counters();
  EXPECT_EQ(c.current_bytes, 0u);
  EXPECT_EQ(c.readahead_failures, 2u);
  int files = -1;
  EXPECT_EQ(ChunkFileBytes(cache->options().dir, &files), 0u);
  EXPECT_EQ(files, 0);
  // An object shorter than its caller claims is corrupt, and not cached.
  store_->fail = false;
  auto short_read = cache->Read(*store_, "f.log", size + 500, 2500, 600);
  ASSERT_FALSE(short_read.ok());
  EXPECT_EQ(short_read.error().code, Errc::kCorrupt);
  // The store is back: the same read now works.
  EXPECT_EQ(*cache->Read(*store_, "f.log", size, 100, 200),
            Bytes(obj.begin() + 100, obj.begin() + 300));
}

TEST_F(RemoteChunkCacheTest, MissingChunkFileIsAMiss) {
  const uint64_t size = 2000;
  Bytes obj = PutObject("m.log", size, 8);
  auto cache = MakeCache(1 << 20, 1000, 0);
  ASSERT_TRUE(cache->Read(*store_, "m.log", size, 0, kToEnd).ok());
  cache->WaitForReadAhead();  // chunk 1, fetched in the background, is written
  for (const auto& e : fs::directory_iterator(cache->options().dir)) fs::remove(e.path());
  EXPECT_EQ(*cache->Read(*store_, "m.log", size, 0, kToEnd), obj);
  // Both chunks fetched again (chunk 1 of the first read in the background).
  cache->WaitForReadAhead();
  EXPECT_EQ(store_->gets.load(), 4);
  EXPECT_EQ(cache->counters().misses + cache->counters().readahead_fetches, 4u);
  EXPECT_EQ(cache->counters().current_bytes, size);
}

// ReadRange hands out the chunks where they are: a fetched chunk as its own
// buffer, a cached one as its file (sendfile), which stays readable through
// the range after the cache evicts and unlinks it.
TEST_F(RemoteChunkCacheTest, RangesServeCachedChunksFromTheirFiles) {
  const uint64_t size = 2500;
  Bytes obj = PutObject("r.log", size, 10);
  auto cache = MakeCache(2000, 1000, 0);  // room for two chunks
  auto cold = cache->ReadRange(*store_, "r.log", size, 500, 1000);
  ASSERT_TRUE(cold.ok());
  ASSERT_EQ(cold->regions().size(), 2u);  // chunks 0 and 1
  // Chunk 0 was fetched by this read; chunk 1 by its read-ahead, which may
  // be on disk already.
  EXPECT_TRUE(cold->regions()[0].in_memory());
  EXPECT_EQ(*cold->Gather(), Bytes(obj.begin() + 500, obj.begin() + 1500));
  cache->WaitForReadAhead();
  auto warm = cache->ReadRange(*store_, "r.log", size, 500, 1000);
  ASSERT_TRUE(warm.ok());
  ASSERT_EQ(warm->regions().size(), 2u);
  for (const FileRegion& r : warm->regions()) EXPECT_FALSE(r.in_memory());
  EXPECT_EQ(warm->regions()[0].offset, 500u);
  EXPECT_EQ(warm->regions()[0].length, 500u);
  // Chunk 2 evicts chunk 0, whose file the range still holds open.
  ASSERT_TRUE(cache->Read(*store_, "r.log", size, 2000, kToEnd).ok());
  cache->WaitForReadAhead();
  EXPECT_EQ(cache->counters().evictions, 1u);
  EXPECT_EQ(*warm->Gather(), Bytes(obj.begin() + 500, obj.begin() + 1500));
}

TEST_F(RemoteChunkCacheTest, DisabledCachePassesThrough) {
  const uint64_t size = 3000;
  Bytes obj = PutObject("d.log", size, 9);
  auto cache = MakeCache(0, 1000, 2);
  EXPECT_FALSE(cache->enabled());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(*cache->Read(*store_, "d.log", size, 0, kToEnd), obj);
  EXPECT_EQ(store_->gets.load(), 3);
  EXPECT_EQ(cache->Read(*store_, "d.log", size, 5000, 1).error().code,
            store_->Get("d.log", 5000, 1).error().code);
  EXPECT_EQ(cache->counters().hits + cache->counters().misses, 0u);
  EXPECT_FALSE(fs::exists(cache->options().dir));
}

TEST_F(RemoteChunkCacheTest, OpenRemovesOnlyOldChunkFiles) {
  const std::string dir = cache_dir_.path() + "/cache";
  fs::create_directories(dir);
  for (const char* name : {"0000000000000001.chunk", "0000000000000002.chunk.tmp", "keep.txt"}) {
    std::ofstream(dir + "/" + name) << "x";
  }
  auto cache = MakeCache(1 << 20, 1000, 0);
  EXPECT_TRUE(fs::exists(dir + "/keep.txt"));
  EXPECT_FALSE(fs::exists(dir + "/0000000000000001.chunk"));
  EXPECT_FALSE(fs::exists(dir + "/0000000000000002.chunk.tmp"));
}

// A tiered partition read back by a sequential consumer, twice.
class RemoteReadCacheTest : public testing::TieredLogTest {
 protected:
  void SetUp() override {
    config_.segment_bytes = 128 * 1024;
    config_.index_interval_bytes = 4096;
    OpenLog();
    Produce(600, /*records=*/10);  // ~1.2 KiB batches: ~5 segments
  }

  std::unique_ptr<RemoteLogManager> MakeManager(const std::string& cache_dir) {
    auto store = MakeStore(remote_);
    store_ = store.get();
    RemoteLogManagerOptions o = FastOptions();
    o.cache_dir = cache_dir;
    o.cache_bytes = 4 << 20;
    o.cache_chunk_bytes = 16 * 1024;
    o.readahead_chunks = 2;
    auto m = Manage(std::move(store), o);
    m->Start();
    EXPECT_TRUE(m->WaitForUploads(30000));
    return m;
  }

  // Reads every remote offset in order, 8 KiB per fetch; returns the bytes.
  Bytes Consume(RemoteLogManager& m, Offset end, double* ms) {
    auto t0 = std::chrono::steady_clock::now();
    Bytes out;
    Offset next = 0_o;
    while (next <= end) {
      auto r = m.Read(id_.tp(), next, 8192);
      EXPECT_TRUE(r.ok()) << next;
      if (!r.ok()) break;
      auto hs = storage::testing::Headers(*r);
      if (hs.empty()) break;
      next = hs.back().last_offset() + 1;
      out.insert(out.end(), r->begin(), r->end());
    }
    *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }

  Bytes LocalRolledBytes() const {
    Bytes all;
    for (const auto& s : log_->RolledSegments()) {
      std::ifstream in(s.log_path, std::ios::binary);
      all.insert(all.end(), std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return all;
  }

  TempDir cache_;
  CountingStorage* store_ = nullptr;
};

TEST_F(RemoteReadCacheTest, SequentialConsumerRereadingOldDataHitsTheCache) {
  const auto rolled = log_->RolledSegments();
  ASSERT_GE(rolled.size(), 4u);
  const Bytes expected = LocalRolledBytes();
  const Offset end = rolled.back().end_offset;

  // Baseline without a cache, every Get 2 ms away.
  double no_cache_ms = 0;
  {
    auto m = MakeManager("");
    store_->delay_ms = 2;
    EXPECT_EQ(Consume(*m, end, &no_cache_ms), expected);
    EXPECT_EQ(m->cache_counters().misses + m->cache_counters().hits, 0u);
  }

  auto m = MakeManager(cache_.path());
  store_->delay_ms = 2;
  double first_ms = 0, second_ms = 0;
  ASSERT_EQ(Consume(*m, end, &first_ms), expected);
  const ChunkCacheCounters first = m->cache_counters();
  // Only the first chunk waits on the store: read-ahead covers each segment,
  // and the next segment is prefetched before the consumer crosses into it.
  EXPECT_LE(first.misses, 1u) << first.hits << " hits, " << first.readahead_dropped
                              << " read-aheads dropped, " << first.readahead_failures << " failed, "
                              << first.write_failures << " writes failed, " << first.writes_skipped
                              << " skipped";
  m->cache().WaitForReadAhead();
  const int gets_before = store_->gets.load();
  const ChunkCacheCounters before = m->cache_counters();
  ASSERT_EQ(Consume(*m, end, &second_ms), expected);
  const ChunkCacheCounters after = m->cache_counters();
  const double hits = double(after.hits - before.hits);
  const double misses = double(after.misses - before.misses);
  const double ratio = hits / (hits + misses);
  EXPECT_GT(ratio, 0.9);
  EXPECT_EQ(store_->gets.load(), gets_before);  // .log and .index both cached
  EXPECT_LE(after.current_bytes, uint64_t(4 << 20));
  std::printf(
      "[ remote cache ] %zu bytes in %zu segments: no cache %.1f ms; first pass %.1f ms "
      "(hit ratio %.3f, %llu read-ahead); second pass %.1f ms (hit ratio %.3f)\n",
      expected.size(), rolled.size(), no_cache_ms, first_ms,
      double(first.hits) / double(first.hits + first.misses),
      static_cast<unsigned long long>(first.readahead_fetches), second_ms, ratio);
}

// ReadRange gives the bytes Read gives, and a bound ends the answer before
// the first batch reaching it (a follower's high watermark).
TEST_F(RemoteReadCacheTest, RangesEqualReadsAndStopBelowTheBound) {
  const Offset end = log_->RolledSegments().back().end_offset;
  auto m = MakeManager(cache_.path());
  int bounded_reads = 0;
  for (int pass = 0; pass < 2; ++pass) {  // cold, then from the cache's files
    Offset next = 0_o;
    while (next <= end) {
      auto bytes = m->Read(id_.tp(), next, 8192);
      auto range = m->ReadRange(id_.tp(), next, 8192, kNoOffset);
      ASSERT_TRUE(bytes.ok() && range.ok()) << next;
      ASSERT_EQ(*range->Gather(), *bytes) << next;
      auto hs = storage::testing::Headers(*bytes);
      ASSERT_FALSE(hs.empty()) << next;
      if (hs.size() >= 2) {  // (a segment's last batch comes alone)
        // Bounded at the second batch's last offset: only the first batch.
        auto bounded = m->ReadRange(id_.tp(), next, 8192, hs[1].last_offset());
        ASSERT_TRUE(bounded.ok());
        ASSERT_EQ(bounded->size(), uint64_t(hs[0].size_in_bytes())) << next;
        ++bounded_reads;
      }
      // Bounded at the first batch's last offset: nothing.
      auto none = m->ReadRange(id_.tp(), next, 8192, hs[0].last_offset());
      ASSERT_TRUE(none.ok() && none->empty()) << next;
      next = hs.back().last_offset() + 1;
    }
    m->cache().WaitForReadAhead();
  }
  EXPECT_GT(bounded_reads, 20);
  EXPECT_GT(m->cache_counters().hits, 0u);
}

// Batches larger than a read's max_bytes plus its 64 KiB of slack: each read
// still returns its first batch whole (KIP-74), cold, cached and uncached.
class LargeBatchReadTest : public testing::TieredLogTest {
 protected:
  void SetUp() override {
    config_.segment_bytes = 1 << 20;
    OpenLog();
    Produce(12, /*records=*/1, /*value_bytes=*/100 * 1024);
  }
};

TEST_F(LargeBatchReadTest, AnOversizedFirstBatchComesBackWhole) {
  for (const bool cached : {true, false}) {
    TempDir cache;
    RemoteLogManagerOptions o = FastOptions();
    if (cached) {
      o.cache_dir = cache.path();
      o.cache_bytes = 8 << 20;
      o.cache_chunk_bytes = 16 * 1024;  // a batch spans several chunks
    }
    auto m = Manage(MakeStore(remote_), o);
    m->Start();
    ASSERT_TRUE(m->WaitForUploads(30000));
    const Offset end = log_->RolledSegments().back().end_offset;
    ASSERT_GE(end, 4_o);
    for (Offset next = 0_o; next <= end; next = next + 1) {
      auto range = m->ReadRange(id_.tp(), next, 1000, kNoOffset);
      ASSERT_TRUE(range.ok()) << next << (range.ok() ? "" : range.error().message);
      auto bytes = range->Gather();
      ASSERT_TRUE(bytes.ok());
      auto hs = storage::testing::Headers(*bytes);
      ASSERT_EQ(hs.size(), 1u) << "cached=" << cached << " offset " << next;
      EXPECT_EQ(hs[0].base_offset, next);
      EXPECT_GT(hs[0].size_in_bytes(), 100 * 1024);
      EXPECT_EQ(bytes->size(), size_t(hs[0].size_in_bytes()));
    }
  }
}

}  // namespace
}  // namespace strata::tiered
