// JwksSource: a file:// source re-read when rewritten (on a hand-moved
// clock, no sleeps); an http(s) source refreshed by its own thread, never by
// Current(), early on RequestRefresh (rate-limited), and stopped promptly
// mid-fetch (on the real clock, with a fake endpoint that can stall).
#include "security/jwks_source.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "security/jose_test_util.h"

namespace strata::security {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::steady_clock;
using testing::JwksJson;
using testing::MakeEcKey;
using testing::TestKey;

#define EXPECT_REFUSED(message, fragment) \
  EXPECT_NE((message).find(fragment), std::string::npos) << (message)

const TestKey& Ec1() {
  static const TestKey key = MakeEcKey("ec1");
  return key;
}
const TestKey& Ec2() {
  static const TestKey key = MakeEcKey("ec2");
  return key;
}

// Polls `done` for up to 5 s: for what the refresh thread does in its time.
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = steady_clock::now() + std::chrono::seconds(5);
  while (!done()) {
    if (steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return true;
}

milliseconds Since(steady_clock::time_point t0) {
  return std::chrono::duration_cast<milliseconds>(steady_clock::now() - t0);
}

// An identity provider's JWKS endpoint behind JwksSource's fetch function:
// serves `body` (refuses the connection while it is empty), counts fetches,
// and while held makes each fetch wait until released, stopped, or its own
// 1 s timeout passes, as a stalled provider under curl's timeout would.
class FakeEndpoint {
 public:
  explicit FakeEndpoint(std::string body) : body_(std::move(body)) {}

  auto Fetch() {
    return [this](const std::string& url, std::stop_token stop) { return Serve(url, stop); };
  }
  void Set(std::string body) {
    std::lock_guard lock(mu_);
    body_ = std::move(body);
  }
  void Hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      held_ = false;
    }
    released_.notify_all();
  }
  int fetches() const {
    std::lock_guard lock(mu_);
    return fetches_;
  }
  int stalled() const {  // fetches waiting now
    std::lock_guard lock(mu_);
    return stalled_;
  }
  std::string last_url() const {
    std::lock_guard lock(mu_);
    return last_url_;
  }

 private:
  Result<std::string> Serve(const std::string& url, std::stop_token stop) {
    std::unique_lock lock(mu_);
    ++fetches_;
    last_url_ = url;
    if (held_) {
      ++stalled_;
      released_.wait_for(lock, stop, std::chrono::seconds(1), [this] { return !held_; });
      --stalled_;
      if (held_) return MakeError(Errc::kTimeout, "timed out");
    }
    if (body_.empty()) return MakeError(Errc::kUnavailable, "connection refused");
    return body_;
  }

  mutable std::mutex mu_;
  std::condition_variable_any released_;
  std::string body_;
  bool held_ = false;
  int fetches_ = 0;
  int stalled_ = 0;
  std::string last_url_;
};

// A temporary directory with a JWKS file and a clock moved by hand.
class JwksSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "strata-jwks-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ / "jwks.json";
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& text) {
    std::ofstream(path_, std::ios::trunc) << text;
    // Whatever the file system's timestamp granularity, the rewrite shows.
    fs::last_write_time(path_, fs::file_time_type::clock::now() + std::chrono::seconds(++writes_));
  }
  JwksSourceOptions Options(std::string url) {
    JwksSourceOptions options;
    options.url = std::move(url);
    options.refresh_ms = 60000;
    options.now_ms = [this] { return now_ms_.load(); };
    return options;
  }
  // An https source on `endpoint`, refreshed every `refresh_ms` (real time).
  std::unique_ptr<JwksSource> OpenHttps(FakeEndpoint& endpoint, int64_t refresh_ms) {
    JwksSourceOptions options = Options("HTTPS://idp.example/jwks");
    options.refresh_ms = refresh_ms;
    options.retry_backoff_ms = std::min<int64_t>(refresh_ms, 10000);
    options.fetch = endpoint.Fetch();
    auto source = JwksSource::Open(std::move(options));
    EXPECT_TRUE(source.ok()) << source.error().message;
    return source.ok() ? std::move(source).value() : nullptr;
  }
  static std::string Kids(const std::shared_ptr<const Jwks>& jwks) {
    std::string kids;
    for (const Jwks::Key& k : jwks->keys()) kids += (kids.empty() ? "" : ",") + k.kid;
    return kids;
  }

  fs::path dir_, path_;
  std::atomic<int64_t> now_ms_{1000};  // also read on the refresh thread
  int writes_ = 0;
};

TEST_F(JwksSourceTest, ReloadsARewrittenFileAfterTheRefreshInterval) {
  Write(JwksJson({&Ec1()}));
  auto source = JwksSource::Open(Options("file://" + path_.string()));
  ASSERT_TRUE(source.ok()) << source.error().message;
  EXPECT_EQ(Kids((*source)->Current()), "ec1");

  Write(JwksJson({&Ec1(), &Ec2()}));
  now_ms_ += 59999;  // not yet due
  EXPECT_EQ(Kids((*source)->Current()), "ec1");
  now_ms_ += 1;
  EXPECT_EQ(Kids((*source)->Current()), "ec1,ec2");

  // A broken rewrite keeps the keys held and says why, until it is fixed.
  Write("{\"keys\": [");
  now_ms_ += 60000;
  EXPECT_EQ(Kids((*source)->Current()), "ec1,ec2");
  ASSERT_TRUE((*source)->last_error().has_value());
  EXPECT_REFUSED((*source)->last_error()->message, "not valid JSON");
  Write(JwksJson({&Ec2()}));
  now_ms_ += 10000;  // failures are retried after the backoff, not the full interval
  EXPECT_EQ(Kids((*source)->Current()), "ec2");
  EXPECT_FALSE((*source)->last_error().has_value());

  fs::remove(path_);
  EXPECT_FALSE((*source)->Refresh().ok());
  EXPECT_EQ(Kids((*source)->Current()), "ec2");
}

TEST_F(JwksSourceTest, RefusesBadUrlsAndAMissingFirstLoad) {
  EXPECT_FALSE(JwksSource::Open(Options("file://" + path_.string())).ok());  // no file yet
  EXPECT_FALSE(JwksSource::Open(Options("file://relative/jwks.json")).ok());
  EXPECT_FALSE(JwksSource::Open(Options("ftp://idp.example/jwks")).ok());
  EXPECT_FALSE(JwksSource::Open(Options("https://idp.example/jwks")).ok());  // no fetch function
  FakeEndpoint endpoint(JwksJson({&Ec1()}));
  JwksSourceOptions no_period = Options("https://idp.example/jwks");
  no_period.fetch = endpoint.Fetch();
  no_period.refresh_ms = 0;  // as Kafka, a refresh thread needs a period
  EXPECT_FALSE(JwksSource::Open(std::move(no_period)).ok());
  endpoint.Set("");  // the provider is down at start-up
  JwksSourceOptions down = Options("https://idp.example/jwks");
  down.fetch = endpoint.Fetch();
  EXPECT_FALSE(JwksSource::Open(std::move(down)).ok());
}

TEST_F(JwksSourceTest, RefreshesHttpsOnItsOwnThread) {
  FakeEndpoint endpoint(JwksJson({&Ec1()}));
  auto source = OpenHttps(endpoint, 30);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(Kids(source->Current()), "ec1");
  EXPECT_EQ(endpoint.last_url(), "HTTPS://idp.example/jwks");

  endpoint.Set("");  // the endpoint goes down: the keys held stay
  ASSERT_TRUE(Eventually([&] { return source->last_error().has_value(); }));
  EXPECT_REFUSED(source->last_error()->message, "connection refused");
  EXPECT_EQ(Kids(source->Current()), "ec1");
  endpoint.Set(JwksJson({&Ec2()}));
  ASSERT_TRUE(Eventually([&] {
    return Kids(source->Current()) == "ec2" && !source->last_error().has_value();
  }));
}

TEST_F(JwksSourceTest, CurrentNeverFetchesHttps) {
  FakeEndpoint endpoint(JwksJson({&Ec1()}));
  auto source = OpenHttps(endpoint, 3600000);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(endpoint.fetches(), 1);  // Open's first load
  now_ms_ += 2 * 3600000;            // long due, by the source's clock
  for (int i = 0; i < 10; ++i) EXPECT_EQ(Kids(source->Current()), "ec1");
  EXPECT_EQ(endpoint.fetches(), 1);
  const auto t0 = steady_clock::now();
  source.reset();  // the refresh thread, asleep for an hour, stops at once
  EXPECT_LT(Since(t0), milliseconds(500));
}

TEST_F(JwksSourceTest, CurrentDoesNotWaitForASlowFetch) {
  FakeEndpoint endpoint(JwksJson({&Ec1()}));
  auto source = OpenHttps(endpoint, 3600000);
  ASSERT_NE(source, nullptr);
  endpoint.Set(JwksJson({&Ec1(), &Ec2()}));
  endpoint.Hold();
  source->RequestRefresh("ec2");
  ASSERT_TRUE(Eventually([&] { return endpoint.stalled() == 1; }));
  const auto t0 = steady_clock::now();
  EXPECT_EQ(Kids(source->Current()), "ec1");  // the keys held, while the fetch hangs
  source->RequestRefresh("ec3");              // rate-limited, and never waits either
  EXPECT_LT(Since(t0), milliseconds(100));
  endpoint.Release();
  ASSERT_TRUE(Eventually([&] { return Kids(source->Current()) == "ec1,ec2"; }));
}

TEST_F(JwksSourceTest, RequestRefreshFetchesEarlyAtMostOncePerBackoff) {
  FakeEndpoint endpoint(JwksJson({&Ec1()}));
  auto source = OpenHttps(endpoint, 3600000);  // backoff 10 s, by the hand-moved clock
  ASSERT_NE(source, nullptr);
  endpoint.Set(JwksJson({&Ec1(), &Ec2()}));
  source->RequestRefresh("ec2");
  ASSERT_TRUE(Eventually([&] { return Kids(source->Current()) == "ec1,ec2"; }));
  EXPECT_EQ(endpoint.fetches(), 2);

  // Made-up kids do not make the broker hammer the provider.
  source->RequestRefresh("ec3");
  now_ms_ += 9999;
  source->RequestRefresh("ec4");
  now_ms_ += 1;
  source->RequestRefresh(std::string(1001, 'k'));  // too long to be a kid: ignored
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(endpoint.fetches(), 2);
  source->RequestRefresh("ec5");
  ASSERT_TRUE(Eventually([&] { return endpoint.fetches() == 3; }));
}

TEST_F(JwksSourceTest, RequestRefreshRechecksAFileAtOnce) {
  Write(JwksJson({&Ec1()}));
  auto source = JwksSource::Open(Options("file://" + path_.string()));
  ASSERT_TRUE(source.ok()) << source.error().message;
  Write(JwksJson({&Ec1(), &Ec2()}));
  EXPECT_EQ(Kids((*source)->Current()), "ec1");  // not due for a minute
  (*source)->RequestRefresh("ec2");
  EXPECT_EQ(Kids((*source)->Current()), "ec1,ec2");
  Write(JwksJson({&Ec2()}));
  (*source)->RequestRefresh("ec3");  // within the backoff
  EXPECT_EQ(Kids((*source)->Current()), "ec1,ec2");
  now_ms_ += 10000;
  (*source)->RequestRefresh("ec3");
  EXPECT_EQ(Kids((*source)->Current()), "ec2");
}

TEST_F(JwksSourceTest, DestructorInterruptsAnInFlightFetch) {
  FakeEndpoint endpoint(JwksJson({&Ec1()}));
  auto source = OpenHttps(endpoint, 3600000);
  ASSERT_NE(source, nullptr);
  endpoint.Hold();
  source->RequestRefresh("ec2");
  ASSERT_TRUE(Eventually([&] { return endpoint.stalled() == 1; }));
  const auto t0 = steady_clock::now();
  source.reset();  // the fetch would wait 1 s; its stop token ends it
  EXPECT_LT(Since(t0), milliseconds(500));
  EXPECT_EQ(endpoint.stalled(), 0);
}

}  // namespace
}  // namespace strata::security
