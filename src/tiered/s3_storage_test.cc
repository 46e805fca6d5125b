// Tests against a real S3-compatible server. Skipped unless STRATA_TEST_S3_ENDPOINT is set, e.g.
// by tests/s3/test_s3_storage.py, which starts S3Proxy and runs this binary with:
//   STRATA_TEST_S3_ENDPOINT=http://127.0.0.1:<port>  STRATA_TEST_S3_BUCKET=<an existing bucket>
//   STRATA_TEST_S3_ACCESS_KEY / STRATA_TEST_S3_SECRET_KEY
// The outage test also needs STRATA_TEST_S3_KILL_CMD and STRATA_TEST_S3_RESTART_CMD: shell
// commands that kill -9 the server and restart it on the same port and data.
#include "tiered/s3_storage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <thread>

#include "tiered/s3_xml.h"
#include "tiered/test_util.h"

namespace strata::tiered {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
using testing::RandomBytes;
using testing::TempDir;
using testing::ToBytes;

std::string EnvOr(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

double SecondsSince(Steady::time_point t) {
  return std::chrono::duration<double>(Steady::now() - t).count();
}

class S3Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (EnvOr("STRATA_TEST_S3_ENDPOINT").empty()) {
      GTEST_SKIP() << "STRATA_TEST_S3_ENDPOINT not set (see tests/s3)";
    }
    // A fresh prefix per test so reruns do not collide.
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    prefix_ =
        fmt::format("{}-{}-{}", info->name(), ::getpid(), Steady::now().time_since_epoch().count());
    storage_ = Open(prefix_);
  }

  S3Options Options(const std::string& prefix) const {
    S3Options o;
    o.endpoint = EnvOr("STRATA_TEST_S3_ENDPOINT");
    o.bucket = EnvOr("STRATA_TEST_S3_BUCKET");
    o.prefix = prefix;
    // Virtual-hosted (bucket.host) when the server is set up for it (tests/s3).
    o.path_style = EnvOr("STRATA_TEST_S3_VIRTUAL_HOSTED").empty();
    o.credentials.access_key_id = EnvOr("STRATA_TEST_S3_ACCESS_KEY");
    o.credentials.secret_access_key = EnvOr("STRATA_TEST_S3_SECRET_KEY");
    o.default_timeout = milliseconds(60'000);
    o.connect_timeout = milliseconds(2000);
    return o;
  }

  std::unique_ptr<S3Storage> Open(const std::string& prefix) {
    return std::make_unique<S3Storage>(Options(prefix));
  }

  std::string prefix_;
  std::unique_ptr<S3Storage> storage_;
};

TEST_F(S3Test, PutGetStatListDelete) {
  ASSERT_TRUE(storage_->Put("t/0/a.log", PutSource::Memory(ToBytes("hello world"))).ok());
  ASSERT_TRUE(storage_->Put("t/0/b.idx", PutSource::Memory(ToBytes(""))).ok());
  ASSERT_TRUE(storage_->Put("t/1/c.log", PutSource::Memory(ToBytes("x"))).ok());
  ASSERT_TRUE(storage_->Put("top", PutSource::Memory(ToBytes("+= odd"))).ok());
  EXPECT_EQ(*storage_->Get("t/0/a.log"), ToBytes("hello world"));
  EXPECT_EQ(*storage_->Get("t/0/a.log", 6, 3), ToBytes("wor"));
  EXPECT_EQ(*storage_->Get("t/0/a.log", 6), ToBytes("world"));
  EXPECT_EQ(*storage_->Get("t/0/a.log", 6, 100), ToBytes("world"));
  EXPECT_TRUE(storage_->Get("t/0/a.log", 11)->empty());  // exactly at the end
  EXPECT_TRUE(storage_->Get("t/0/a.log", 3, 0)->empty());
  EXPECT_EQ(storage_->Get("t/0/a.log", 12).error().code, Errc::kOutOfRange);
  EXPECT_EQ(storage_->Get("t/0/a.log", 12, 5).error().code, Errc::kOutOfRange);
  EXPECT_TRUE(storage_->Get("t/0/b.idx")->empty());
  EXPECT_TRUE(storage_->Get("t/0/b.idx", 0, 10)->empty());  // an empty object, ranged
  EXPECT_EQ(storage_->Get("t/0/missing").error().code, Errc::kNotFound);
  EXPECT_EQ(*storage_->Get("top"), ToBytes("+= odd"));

  auto file = storage_->Stat("t/0/a.log");
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_TRUE(file->exists && !file->is_dir);
  EXPECT_EQ(file->size, 11u);
  EXPECT_GT(file->mtime_ms, 0);
  auto dir = storage_->Stat("t/0");
  EXPECT_TRUE(dir->exists && dir->is_dir);
  EXPECT_FALSE(storage_->Stat("t/9")->exists);
  EXPECT_FALSE(storage_->Stat("t/0/a")->exists);  // a key's prefix is not a directory

  auto root = storage_->List("");
  ASSERT_TRUE(root.ok()) << root.error().message;
  ASSERT_EQ(root->size(), 2u);
  EXPECT_EQ((*root)[0].name, "t");
  EXPECT_TRUE((*root)[0].is_dir);
  EXPECT_EQ((*root)[1].name, "top");
  EXPECT_EQ((*root)[1].size, 6u);
  auto t0 = storage_->List("t/0");
  ASSERT_EQ(t0->size(), 2u);
  EXPECT_EQ((*t0)[0].name, "a.log");
  EXPECT_EQ((*t0)[1].name, "b.idx");
  EXPECT_TRUE(storage_->List("nothing")->empty());

  // Rename: a copy and a delete; never over an existing object.
  EXPECT_EQ(storage_->Rename("t/0/a.log", "t/1/c.log").error().code, Errc::kAlreadyExists);
  ASSERT_TRUE(storage_->Rename("t/0/a.log", "t/2/a.log").ok());
  EXPECT_FALSE(storage_->Stat("t/0/a.log")->exists);
  EXPECT_EQ(*storage_->Get("t/2/a.log"), ToBytes("hello world"));
  EXPECT_EQ(storage_->Rename("t/0/gone", "t/3/x").error().code, Errc::kNotFound);

  EXPECT_TRUE(storage_->MkDirs("empty/dir").ok());
  EXPECT_TRUE(storage_->Delete("t/1/c.log").ok());
  EXPECT_TRUE(storage_->Delete("t/1/c.log").ok());  // idempotent
  EXPECT_FALSE(storage_->Stat("t/1")->exists);
  EXPECT_TRUE(storage_->Delete("t", /*recursive=*/true).ok());
  EXPECT_TRUE(storage_->List("t")->empty());
  EXPECT_EQ(storage_->List("")->size(), 1u);
  EXPECT_EQ(storage_->Get("../x").error().code, Errc::kInvalidArgument);
}

TEST_F(S3Test, RecursiveDeleteGoesInBatches) {
  // More keys than one DeleteObjects request takes, and than one list page holds.
  constexpr int kKeys = 1100;
  std::vector<std::thread> writers;
  std::atomic<int> failed{0};
  for (int w = 0; w < 8; ++w) {
    writers.emplace_back([&, w] {
      for (int i = w; i < kKeys; i += 8) {
        Bytes one = ToBytes(std::to_string(i));
        if (!storage_->Put(fmt::format("d/{:05}", i), PutSource::Memory(one)).ok()) ++failed;
      }
    });
  }
  for (auto& t : writers) t.join();
  ASSERT_EQ(failed.load(), 0);
  auto listed = storage_->List("d");
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  ASSERT_EQ(listed->size(), size_t(kKeys));  // across list pages
  EXPECT_EQ((*listed)[kKeys - 1].name, fmt::format("{:05}", kKeys - 1));
  ASSERT_TRUE(storage_->Delete("d", /*recursive=*/true).ok());
  EXPECT_TRUE(storage_->List("d")->empty());
}

TEST_F(S3Test, MultipartUploadsFromFileAndMemory) {
  S3Options o = Options(prefix_);
  o.multipart_threshold = 8u << 20;
  o.part_size = 5u << 20;
  o.upload_parallelism = 3;
  S3Storage multipart(o);
  constexpr size_t kSize = (40u << 20) + 12345;  // 9 parts, the last a short one
  TempDir dir;
  Bytes data = RandomBytes(kSize, 40);
  {
    std::ofstream f(dir / "seg.log", std::ios::binary);
    f.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
  }
  auto start = Steady::now();
  Status put = multipart.Put("big/00000000000000000000.log", PutSource::File(dir / "seg.log"));
  const double put_s = SecondsSince(start);
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_EQ(multipart.Stat("big/00000000000000000000.log")->size, kSize);
  start = Steady::now();
  auto all = multipart.Get("big/00000000000000000000.log");
  const double get_s = SecondsSince(start);
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_TRUE(*all == data);
  std::printf("[s3] %zu MiB multipart put %.2fs (%.1f MB/s), get %.2fs (%.1f MB/s)\n", kSize >> 20,
              put_s, kSize / 1e6 / put_s, get_s, kSize / 1e6 / get_s);
  // Ranges across part boundaries and at the ends.
  std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {0, 1}, {(5u << 20) - 7, 14}, {(10u << 20) - 1, 2}, {kSize - 10, 10}, {kSize - 10, 1000}};
  std::mt19937_64 rng(3);
  for (int i = 0; i < 10; ++i) ranges.emplace_back(rng() % kSize, 1 + rng() % (6u << 20));
  for (auto [off, len] : ranges) {
    auto got = multipart.Get("big/00000000000000000000.log", off, len);
    ASSERT_TRUE(got.ok()) << off << ": " << got.error().message;
    const uint64_t end = std::min<uint64_t>(kSize, off + len);
    ASSERT_EQ(got->size(), end - off) << off;
    ASSERT_TRUE(std::equal(got->begin(), got->end(), data.begin() + ptrdiff_t(off))) << off;
  }
  // From memory, replacing the object.
  Bytes other = RandomBytes(11u << 20, 11);
  ASSERT_TRUE(multipart.Put("big/00000000000000000000.log", PutSource::Memory(other)).ok());
  EXPECT_TRUE(*multipart.Get("big/00000000000000000000.log") == other);
  // Nothing left half-done.
  EXPECT_EQ(*multipart.AbortOrphanedUploads(milliseconds(0), {}), 0);
}

TEST_F(S3Test, CancelledUploadIsAbortedAndOrphansAreSwept) {
  S3Options o = Options(prefix_);
  o.multipart_threshold = 5u << 20;
  o.part_size = 5u << 20;
  o.upload_parallelism = 1;
  S3Storage multipart(o);
  Bytes data = RandomBytes(30u << 20, 2);
  CallOptions cancel;
  cancel.cancel = MakeCancelFlag();
  cancel.on_source = nullptr;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(50));
    cancel.cancel->store(true);
  });
  Status st = multipart.Put("c/seg", PutSource::Memory(data), cancel);
  canceller.join();
  if (!st.ok()) {
    EXPECT_EQ(st.error().code, Errc::kShuttingDown) << st.error().message;
    EXPECT_FALSE(multipart.Stat("c/seg")->exists);
  }
  EXPECT_EQ(*multipart.AbortOrphanedUploads(milliseconds(0), {}), 0) << "the cancelled upload";

  // A broker that died mid-upload leaves one started and never finished: a raw request here.
  HttpClient http(1);
  AwsSigV4 sign{"us-east-1", "s3", o.credentials.access_key_id, o.credentials.secret_access_key,
                ""};
  HttpRequest start;
  start.method = HttpRequest::Method::kPost;
  start.url = fmt::format("{}/{}/{}/orphan?uploads=", o.endpoint, o.bucket, prefix_);
  start.headers.push_back("Content-Type: application/octet-stream");
  start.sign = &sign;
  auto started = http.Perform(start);
  ASSERT_TRUE(started.ok()) << started.error().message;
  ASSERT_EQ(started->status, 200) << s3::AsText(started->body);
  // Younger than the age given: kept (it may be another broker's upload in progress).
  EXPECT_EQ(*multipart.AbortOrphanedUploads(std::chrono::hours(1), {}), 0);
  EXPECT_EQ(*multipart.AbortOrphanedUploads(milliseconds(0), {}), 1);
  EXPECT_EQ(*multipart.AbortOrphanedUploads(milliseconds(0), {}), 0);
}

TEST_F(S3Test, ErrorsMapToErrc) {
  S3Options wrong = Options(prefix_);
  wrong.credentials.secret_access_key = "not-the-secret";
  S3Storage refused(wrong);
  auto st = refused.Put("x", PutSource::Memory(ToBytes("x")));
  EXPECT_EQ(st.error().code, Errc::kInvalidArgument);
  EXPECT_NE(st.error().message.find("SignatureDoesNotMatch"), std::string::npos)
      << st.error().message;
  S3Options no_bucket = Options(prefix_);
  no_bucket.bucket = "no-such-bucket-here";
  S3Storage missing(no_bucket);
  auto got = missing.Get("x");
  EXPECT_EQ(got.error().code, Errc::kInvalidArgument);
  EXPECT_NE(got.error().message.find("NoSuchBucket"), std::string::npos) << got.error().message;
  S3Options closed = Options(prefix_);
  closed.endpoint = "http://127.0.0.1:1";
  S3Storage nobody(closed);
  EXPECT_EQ(nobody.Get("x").error().code, Errc::kUnavailable);
}

TEST_F(S3Test, CredentialsFromTheSharedFileAndProfile) {
  TempDir dir;
  {
    std::ofstream f(dir / "credentials");
    f << "[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n"
      << "[strata]\naws_access_key_id = " << EnvOr("STRATA_TEST_S3_ACCESS_KEY")
      << "\naws_secret_access_key=" << EnvOr("STRATA_TEST_S3_SECRET_KEY") << "\n";
  }
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", (dir / "credentials").c_str(), 1);
  ::setenv("AWS_PROFILE", "strata", 1);
  ::unsetenv("AWS_ACCESS_KEY_ID");
  S3Options o = Options(prefix_);
  o.credentials = {};
  S3Storage from_file(o);
  Status put = from_file.Put("f", PutSource::Memory(ToBytes("by file")));
  ::unsetenv("AWS_PROFILE");  // the default profile's keys are wrong
  S3Storage default_profile(o);
  auto refused = default_profile.Get("f");
  ::unsetenv("AWS_SHARED_CREDENTIALS_FILE");
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_EQ(refused.error().code, Errc::kInvalidArgument) << refused.error().message;
}

TEST_F(S3Test, OutageFailsFastAndRestartRecovers) {
  const std::string kill = EnvOr("STRATA_TEST_S3_KILL_CMD");
  const std::string restart = EnvOr("STRATA_TEST_S3_RESTART_CMD");
  if (kill.empty() || restart.empty()) GTEST_SKIP() << "no kill/restart commands";
  ASSERT_TRUE(storage_->Put("o/before", PutSource::Memory(ToBytes("kept"))).ok());
  ASSERT_EQ(std::system(kill.c_str()), 0);
  const auto start = Steady::now();
  auto down = storage_->Get("o/before");
  EXPECT_EQ(down.error().code, Errc::kUnavailable) << down.error().message;
  EXPECT_LT(SecondsSince(start), 3.0);
  ASSERT_EQ(std::system(restart.c_str()), 0);
  auto back = storage_->Get("o/before");  // the pooled connection died with the server
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, ToBytes("kept"));
  EXPECT_TRUE(storage_->Put("o/after", PutSource::Memory(ToBytes("new"))).ok());
}

}  // namespace
}  // namespace strata::tiered
