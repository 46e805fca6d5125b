// Tests against a real HDFS. Skipped unless STRATA_TEST_WEBHDFS_URI is set, e.g. by
// tests/hdfs/test_webhdfs.py, which starts a MiniDFSCluster and runs this binary:
//   STRATA_TEST_WEBHDFS_URI=webhdfs://127.0.0.1:<http port>/strata-test
// The outage test also needs STRATA_TEST_WEBHDFS_KILL_CMD and STRATA_TEST_WEBHDFS_RESTART_CMD:
// shell commands that kill -9 the HDFS JVM and restart it on the same storage and ports.
#include "tiered/webhdfs_storage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "tiered/remote_uri.h"
#include "tiered/resilient_storage.h"
#include "tiered/test_util.h"

namespace strata::tiered {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
using testing::RandomBytes;
using testing::TempDir;
using testing::ToBytes;

double SecondsSince(Steady::time_point t) {
  return std::chrono::duration<double>(Steady::now() - t).count();
}

class WebHdfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* uri = std::getenv("STRATA_TEST_WEBHDFS_URI");
    if (!uri || !*uri) GTEST_SKIP() << "STRATA_TEST_WEBHDFS_URI not set (see tests/hdfs)";
    auto parsed = ParseRemoteUri(uri);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    uri_ = *parsed;
    // A fresh root per test so reruns and parallel tests do not collide.
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fmt::format("{}/{}-{}-{}", uri_.root == "/" ? "" : uri_.root, info->name(), ::getpid(),
                        Steady::now().time_since_epoch().count());
    storage_ = Open(root_);
  }

  std::unique_ptr<WebHdfsStorage> Open(const std::string& root, int port = 0) {
    WebHdfsOptions o;
    o.host = uri_.host;
    o.port = port ? port : uri_.port;
    o.root = root;
    o.user = "strata-test";
    o.default_timeout = milliseconds(60'000);
    o.connect_timeout = milliseconds(2000);
    return std::make_unique<WebHdfsStorage>(std::move(o));
  }

  RemoteUri uri_;
  std::string root_;
  std::unique_ptr<WebHdfsStorage> storage_;
};

TEST_F(WebHdfsTest, PutGetStatListRenameDelete) {
  WebHdfsStorage& s = *storage_;
  ASSERT_TRUE(s.Put("t/0/a.log", PutSource::Memory(ToBytes("hello world"))).ok());
  ASSERT_TRUE(s.Put("t/0/b.index", PutSource::Memory(ToBytes("xyz"))).ok());
  ASSERT_TRUE(s.Put("t/0/empty", PutSource::Memory({})).ok());
  auto got = s.Get("t/0/a.log");
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*got, ToBytes("hello world"));
  EXPECT_EQ(*s.Get("t/0/a.log", 6, 3), ToBytes("wor"));
  EXPECT_EQ(*s.Get("t/0/a.log", 6, 100), ToBytes("world"));
  EXPECT_TRUE(s.Get("t/0/a.log", 11, 5)->empty());  // offset == size
  EXPECT_EQ(s.Get("t/0/a.log", 12, 5).error().code, Errc::kOutOfRange);
  EXPECT_TRUE(s.Get("t/0/empty")->empty());

  // Overwrite is atomic replacement.
  ASSERT_TRUE(s.Put("t/0/a.log", PutSource::Memory(ToBytes("second"))).ok());
  EXPECT_EQ(*s.Get("t/0/a.log"), ToBytes("second"));

  auto st = s.Stat("t/0/a.log");
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_TRUE(st->exists);
  EXPECT_FALSE(st->is_dir);
  EXPECT_EQ(st->size, 6u);
  EXPECT_GT(st->mtime_ms, 1'600'000'000'000);
  EXPECT_TRUE(s.Stat("t/0")->is_dir);
  auto missing = s.Stat("t/0/nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->exists);

  auto list = s.List("t/0");
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_EQ(list->size(), 3u);  // no temporaries left by the uploads
  EXPECT_EQ((*list)[0].name, "a.log");
  EXPECT_EQ((*list)[0].size, 6u);
  EXPECT_EQ((*list)[1].name, "b.index");
  EXPECT_EQ((*list)[2].name, "empty");
  EXPECT_TRUE(s.List("no/such/dir")->empty());
  auto top = s.List("");
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->size(), 1u);
  EXPECT_EQ((*top)[0].name, "t");
  EXPECT_TRUE((*top)[0].is_dir);

  EXPECT_TRUE(s.Rename("t/0/b.index", "t/0/c.index").ok());
  EXPECT_FALSE(s.Stat("t/0/b.index")->exists);
  EXPECT_EQ(*s.Get("t/0/c.index"), ToBytes("xyz"));
  EXPECT_EQ(s.Rename("t/0/c.index", "t/0/a.log").error().code, Errc::kAlreadyExists);
  EXPECT_EQ(s.Rename("t/0/gone", "t/0/x").error().code, Errc::kNotFound);
  EXPECT_EQ(s.Rename("t/0/c.index", "no/parent/x").error().code, Errc::kNotFound);

  ASSERT_TRUE(s.MkDirs("t/1/deep").ok());
  EXPECT_TRUE(s.Stat("t/1/deep")->is_dir);
  EXPECT_TRUE(s.Delete("t/0/c.index").ok());
  EXPECT_TRUE(s.Delete("t/0/c.index").ok());  // already gone: still OK
  EXPECT_FALSE(s.Stat("t/0/c.index")->exists);
  EXPECT_EQ(s.Delete("t/0").error().code, Errc::kInvalidArgument);  // not empty
  EXPECT_TRUE(s.Delete("t", /*recursive=*/true).ok());
  EXPECT_FALSE(s.Stat("t")->exists);
}

TEST_F(WebHdfsTest, RemoteExceptionsMapToErrc) {
  WebHdfsStorage& s = *storage_;
  auto r = s.Get("missing.log");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::kNotFound);
  EXPECT_NE(r.error().message.find("FileNotFoundException"), std::string::npos)
      << r.error().message;
  ASSERT_TRUE(s.Put("file", PutSource::Memory(ToBytes("1"))).ok());
  // A file where a directory is needed.
  Status put = s.Put("file/child", PutSource::Memory(ToBytes("2")));
  EXPECT_EQ(put.error().code, Errc::kInvalidArgument) << put.error().message;
  EXPECT_NE(put.error().message.find("ParentNotDirectoryException"), std::string::npos);
  EXPECT_EQ(put.error().message.find("\tat org.apache"), std::string::npos);  // no stack trace
  Status mk = s.MkDirs("file");
  EXPECT_EQ(mk.error().code, Errc::kAlreadyExists) << mk.error().message;
  EXPECT_EQ(s.List("file").error().code, Errc::kInvalidArgument);
  ASSERT_TRUE(s.MkDirs("dir").ok());
  auto dir_read = s.Get("dir");
  EXPECT_EQ(dir_read.error().code, Errc::kNotFound) << dir_read.error().message;  // "not a file"
  // Nothing listens there: kUnavailable, fast.
  auto nowhere = Open(root_, /*port=*/1);
  auto start = Steady::now();
  auto st = nowhere->Stat("file");
  EXPECT_EQ(st.error().code, Errc::kUnavailable) << st.error().message;
  EXPECT_LT(SecondsSince(start), 1.0);
}

TEST_F(WebHdfsTest, LargeUploadAndRangedReads) {
  constexpr size_t kSize = 64u << 20;
  TempDir dir;
  Bytes data = RandomBytes(kSize, 64);
  {
    std::ofstream f(dir / "seg.log", std::ios::binary);
    f.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
  }
  auto start = Steady::now();
  Status put = storage_->Put("big/00000000000000000000.log", PutSource::File(dir / "seg.log"));
  double put_s = SecondsSince(start);
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_EQ(storage_->Stat("big/00000000000000000000.log")->size, kSize);

  start = Steady::now();
  auto all = storage_->Get("big/00000000000000000000.log");
  double get_s = SecondsSince(start);
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), kSize);
  EXPECT_TRUE(*all == data);
  std::printf("[webhdfs] 64 MiB put %.2fs (%.1f MB/s), get %.2fs (%.1f MB/s)\n", put_s,
              kSize / 1e6 / put_s, get_s, kSize / 1e6 / get_s);

  // Ranges across HDFS block boundaries (MiniHdfs uses 16 MiB blocks) and at the ends.
  std::vector<std::pair<uint64_t, uint64_t>> ranges = {{0, 1},
                                                       {0, 4096},
                                                       {(16u << 20) - 100, 200},
                                                       {(32u << 20) - 1, 2},
                                                       {(48u << 20), 1 << 20},
                                                       {kSize - 10, 10},
                                                       {kSize - 10, 1000},
                                                       {12345, (20u << 20)}};
  std::mt19937_64 rng(1);
  for (int i = 0; i < 20; ++i) {
    uint64_t off = rng() % kSize;
    ranges.emplace_back(off, 1 + rng() % (2u << 20));
  }
  start = Steady::now();
  for (auto [off, len] : ranges) {
    auto got = storage_->Get("big/00000000000000000000.log", off, len);
    ASSERT_TRUE(got.ok()) << off << ": " << got.error().message;
    uint64_t end = std::min<uint64_t>(kSize, off + len);
    ASSERT_EQ(got->size(), end - off) << off;
    ASSERT_TRUE(std::equal(got->begin(), got->end(), data.begin() + off)) << off << "+" << len;
  }
  std::printf("[webhdfs] %zu ranged reads in %.2fs\n", ranges.size(), SecondsSince(start));

  // From memory too, replacing the object.
  Bytes small = RandomBytes(3 << 20, 5);
  ASSERT_TRUE(storage_->Put("big/00000000000000000000.log", PutSource::Memory(small)).ok());
  EXPECT_EQ(*storage_->Get("big/00000000000000000000.log"), small);
  EXPECT_TRUE(storage_->Delete("big", true).ok());
}

TEST_F(WebHdfsTest, ReadReportsItsDataNodeAndAvoidIsAHint) {
  ASSERT_TRUE(storage_->Put("f", PutSource::Memory(ToBytes("abcdef"))).ok());
  std::string node;
  CallOptions opts;
  opts.on_source = [&](const std::string& n) { node = n; };
  EXPECT_EQ(*storage_->Get("f", 1, 3, opts), ToBytes("bcd"));
  EXPECT_FALSE(node.empty());
  // With one DataNode, excluding it cannot be honoured: the read still succeeds.
  CallOptions avoid;
  avoid.avoid_nodes = {node};
  auto got = storage_->Get("f", 2, 2, avoid);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*got, ToBytes("cd"));
  // Hedged reads over WebHDFS work end to end.
  HedgedReader hedged(Open(root_), HedgeOptions{.threshold = milliseconds(0)});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(*hedged.Get("f", 0, 6), ToBytes("abcdef"));
  EXPECT_EQ(hedged.counters().failures, 0u);
}

// A file's later reads go straight to the DataNode its first read was
// redirected to; the bytes are the file's as it is now (a rewrite is read
// new, a deleted file is not found), and ranges are the ones asked for.
TEST_F(WebHdfsTest, ReadsOfAFileReuseItsDataNodeRedirect) {
  Bytes data = RandomBytes(3 << 20, 21);
  ASSERT_TRUE(storage_->Put("r/seg.log", PutSource::Memory(data)).ok());
  const uint64_t before = storage_->redirects_reused();
  for (uint64_t off : {0u, 1000u, 2u << 20, 3u << 20}) {
    auto got = storage_->Get("r/seg.log", off, 700'000);
    ASSERT_TRUE(got.ok()) << off << ": " << got.error().message;
    const uint64_t end = std::min<uint64_t>(data.size(), off + 700'000);
    EXPECT_EQ(*got, Bytes(data.begin() + off, data.begin() + end)) << off;
  }
  EXPECT_EQ(*storage_->Get("r/seg.log", 5), Bytes(data.begin() + 5, data.end()));
  EXPECT_EQ(storage_->redirects_reused() - before, 4u);  // all but the first
  Bytes rewritten = RandomBytes(1000, 22);
  ASSERT_TRUE(storage_->Put("r/seg.log", PutSource::Memory(rewritten)).ok());
  EXPECT_EQ(*storage_->Get("r/seg.log", 10, 20),
            Bytes(rewritten.begin() + 10, rewritten.begin() + 30));
  ASSERT_TRUE(storage_->Delete("r/seg.log", false).ok());
  EXPECT_EQ(storage_->Get("r/seg.log", 0, 10).error().code, Errc::kNotFound);
}

TEST(WebHdfsRedirectsTest, RangesReplaceTheRedirectsOwn) {
  const std::string url =
      "http://127.0.0.1:9864/webhdfs/v1/a/b.log?op=OPEN&namenoderpcaddress=localhost:8020&"
      "offset=4194304&length=4194304&user.name=s";
  EXPECT_EQ(WebHdfsRedirects::WithRange(url, 7, 9),
            "http://127.0.0.1:9864/webhdfs/v1/a/b.log?op=OPEN&namenoderpcaddress=localhost:8020&"
            "user.name=s&offset=7&length=9");
  EXPECT_EQ(WebHdfsRedirects::WithRange("http://h:1/p", 0, kToEnd), "http://h:1/p?offset=0");
  WebHdfsRedirects r(2);
  r.Remember("a", "u1");
  r.Remember("b", "u2");
  r.Forget("a", "other");  // a newer URL than the failed one stays
  EXPECT_EQ(r.Find("a"), "u1");
  r.Remember("c", "u3");  // over the bound: the oldest goes
  EXPECT_FALSE(r.Find("a"));
  EXPECT_EQ(r.Find("c"), "u3");
  r.Forget("c", "u3");
  EXPECT_FALSE(r.Find("c"));
}

TEST(WebHdfsRedirectsTest, AFileRememberedAgainIsEvictedByItsNewPlace) {
  WebHdfsRedirects r(2);
  r.Remember("a", "u1");
  r.Remember("b", "u2");
  r.Forget("a", "u1");
  r.Remember("a", "u3");  // now newer than b
  r.Remember("c", "u4");  // over the bound: b is the oldest
  EXPECT_FALSE(r.Find("b"));
  EXPECT_EQ(r.Find("a"), "u3");
  EXPECT_EQ(r.Find("c"), "u4");
  for (int i = 0; i < 10; ++i) {  // forgotten places do not pile up or evict live entries
    r.Forget("a", r.Find("a").value_or(""));
    r.Remember("a", fmt::format("v{}", i));
  }
  EXPECT_EQ(r.Find("a"), "v9");
  EXPECT_EQ(r.Find("c"), "u4");
}

TEST_F(WebHdfsTest, ConcurrentCallsShareTheConnectionPool) {
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Bytes data = RandomBytes(100'000 + t, t);
      std::string name = fmt::format("c/{}", t);
      for (int i = 0; i < 5; ++i) {
        if (!storage_->Put(name, PutSource::Memory(data)).ok()) return;
        auto got = storage_->Get(name, 1000, 5000);
        if (!got.ok() || *got != Bytes(data.begin() + 1000, data.begin() + 6000)) return;
      }
      ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads);
  EXPECT_EQ(storage_->List("c")->size(), size_t(kThreads));
}

// kill -9 the HDFS JVM: calls fail with kUnavailable, the breaker opens and fails fast; restart on
// the same storage: the breaker's probe succeeds, it closes, and the data written before is there.
TEST_F(WebHdfsTest, OutageOpensBreakerAndRestartClosesIt) {
  const char* kill_cmd = std::getenv("STRATA_TEST_WEBHDFS_KILL_CMD");
  const char* restart_cmd = std::getenv("STRATA_TEST_WEBHDFS_RESTART_CMD");
  if (!kill_cmd || !restart_cmd) GTEST_SKIP() << "kill/restart commands not given";
  std::vector<std::pair<BreakerState, BreakerState>> transitions;
  std::mutex mu;
  ResilienceOptions o;
  o.retry.max_attempts = 3;
  o.retry.initial_backoff = milliseconds(50);
  o.retry.max_backoff = milliseconds(200);
  o.retry.attempt_timeout = milliseconds(5000);
  o.breaker.failure_threshold = 3;
  o.breaker.open_duration = milliseconds(1000);
  o.breaker.on_transition = [&](BreakerState from, BreakerState to) {
    std::lock_guard lock(mu);
    transitions.emplace_back(from, to);
  };
  ResilientStorage rs = MakeResilientStorage(Open(root_), o);
  RemoteStorage& s = *rs.storage;
  Bytes data = RandomBytes(5 << 20, 77);
  ASSERT_TRUE(s.Put("seg/1.log", PutSource::Memory(data)).ok());

  ASSERT_EQ(std::system(kill_cmd), 0);
  auto start = Steady::now();
  for (int i = 0; i < 3; ++i) {
    auto t = Steady::now();
    auto r = s.Get("seg/1.log", 0, 100);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::kUnavailable) << r.error().message;
    EXPECT_LT(SecondsSince(t), 2.0) << r.error().message;  // refused connections, 3 attempts
  }
  EXPECT_EQ(rs.breaker->state(), BreakerState::kOpen);
  double to_open = SecondsSince(start);
  start = Steady::now();
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(s.Stat("seg/1.log").error().code, Errc::kUnavailable);
  }
  double fast = SecondsSince(start);
  EXPECT_LT(fast, 0.5);  // 1000 calls without touching the network
  std::printf("[webhdfs] breaker open after %.3fs; 1000 rejected calls took %.3f ms\n", to_open,
              fast * 1e3);

  start = Steady::now();
  ASSERT_EQ(std::system(restart_cmd), 0);
  double restart_s = SecondsSince(start);
  // Calls fail fast until a probe gets through after the cool-down; then everything works.
  Result<Bytes> got = MakeError(Errc::kUnavailable, "not tried");
  while (SecondsSince(start) < 120) {
    got = s.Get("seg/1.log");
    if (got.ok() || got.error().code != Errc::kUnavailable) break;
    std::this_thread::sleep_for(milliseconds(200));
  }
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(*got == data);  // the same storage survived the kill -9
  EXPECT_EQ(rs.breaker->state(), BreakerState::kClosed);
  std::printf("[webhdfs] restart took %.1fs; first successful call %.1fs after restart began\n",
              restart_s, SecondsSince(start));
  ASSERT_TRUE(s.Put("seg/2.log", PutSource::Memory(ToBytes("after"))).ok());
  EXPECT_EQ(*s.Get("seg/2.log"), ToBytes("after"));

  std::lock_guard lock(mu);
  ASSERT_GE(transitions.size(), 3u);
  EXPECT_EQ(transitions.front(), std::make_pair(BreakerState::kClosed, BreakerState::kOpen));
  EXPECT_EQ(transitions.back(), std::make_pair(BreakerState::kHalfOpen, BreakerState::kClosed));
  BreakerCounters c = rs.breaker->counters();
  EXPECT_GE(c.rejected, 1000u);
  EXPECT_EQ(c.closed, 1u);
}

}  // namespace
}  // namespace strata::tiered
