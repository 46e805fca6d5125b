#include "tiered/retrying_storage.h"

#include <gtest/gtest.h>

#include "tiered/fault_injecting_storage.h"
#include "tiered/local_fs_storage.h"
#include "tiered/test_util.h"

namespace strata::tiered {
namespace {

using std::chrono::milliseconds;
using testing::RandomBytes;
using testing::TempDir;
using testing::ToBytes;

// Records the backoff sleeps instead of sleeping (and advances a manual clock, if given).
struct SleepRecorder {
  std::vector<milliseconds> sleeps;
  ManualClock* clock = nullptr;
  std::function<bool(milliseconds, const CancelFlag&)> Fn() {
    return [this](milliseconds d, const CancelFlag&) {
      sleeps.push_back(d);
      if (clock) clock->Advance(d.count());
      return true;
    };
  }
};

TEST(RetryingStorage, EveryOperationSucceedsDespiteTwentyPercentFailures) {
  TempDir dir;
  auto local = std::make_unique<LocalFsStorage>(dir / "root");
  auto faulty = std::make_unique<FaultInjectingStorage>(std::move(local), /*seed=*/20240501);
  FaultInjectingStorage* faults = faulty.get();
  faults->SetAllFaults(FaultSpec{.fail_ratio = 0.2, .fail_code = Errc::kUnavailable});
  SleepRecorder rec;
  RetryOptions ro;
  ro.max_attempts = 12;
  ro.sleep = rec.Fn();
  ro.seed = 5;
  RetryingStorage s(std::move(faulty), ro);

  constexpr int kObjects = 150;
  for (int i = 0; i < kObjects; ++i) {
    std::string name = fmt::format("p/{:05}", i);
    Bytes data = RandomBytes(1000 + i, i);
    ASSERT_TRUE(s.Put(name, PutSource::Memory(data)).ok()) << i;
    auto st = s.Stat(name);
    ASSERT_TRUE(st.ok()) << i;
    EXPECT_EQ(st->size, data.size());
    auto got = s.Get(name, 10, 100);
    ASSERT_TRUE(got.ok()) << i;
    EXPECT_EQ(*got, Bytes(data.begin() + 10, data.begin() + 110));
    ASSERT_TRUE(s.Rename(name, name + ".done").ok()) << i;
    ASSERT_TRUE(s.MkDirs(fmt::format("d/{}", i)).ok()) << i;
  }
  auto list = s.List("p");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), size_t(kObjects));
  EXPECT_EQ((*list)[7].name, "00007.done");
  for (int i = 0; i < kObjects; ++i) {
    ASSERT_TRUE(s.Delete(fmt::format("p/{:05}.done", i)).ok()) << i;
  }
  ASSERT_TRUE(s.Delete("d", true).ok());
  EXPECT_TRUE(s.List("p")->empty());

  RetryCounters c = s.counters();
  EXPECT_EQ(c.calls, uint64_t(6 * kObjects + 3));
  EXPECT_EQ(c.failures, 0u);
  EXPECT_EQ(c.attempts, c.calls + c.retries);
  EXPECT_EQ(faults->counters().calls, c.attempts);
  EXPECT_EQ(faults->counters().injected_failures, c.retries);
  // About a quarter of calls need a retry (0.2 / 0.8); far from zero, far from all.
  EXPECT_GT(c.retries, c.calls / 8);
  EXPECT_LT(c.retries, c.calls / 2);
  EXPECT_EQ(rec.sleeps.size(), c.retries);
}

TEST(RetryingStorage, ExponentialBackoffWithFullJitterThenGivesUp) {
  TempDir dir;
  auto faulty =
      std::make_unique<FaultInjectingStorage>(std::make_unique<LocalFsStorage>(dir / "root"), 1);
  faulty->SetAllFaults(FaultSpec{.fail_ratio = 1.0, .fail_code = Errc::kTimeout});
  SleepRecorder rec;
  RetryOptions ro;
  ro.max_attempts = 8;
  ro.initial_backoff = milliseconds(100);
  ro.max_backoff = milliseconds(1000);
  ro.sleep = rec.Fn();
  RetryingStorage s(std::move(faulty), ro);

  // Repeat to see the jitter spread within each cap.
  for (int round = 0; round < 50; ++round) {
    rec.sleeps.clear();
    auto r = s.Stat("x");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::kTimeout);
    ASSERT_EQ(rec.sleeps.size(), 7u);
    for (size_t k = 0; k < rec.sleeps.size(); ++k) {
      int64_t cap = std::min<int64_t>(1000, 100 << k);
      EXPECT_GE(rec.sleeps[k].count(), 0);
      EXPECT_LE(rec.sleeps[k].count(), cap) << "retry " << k + 1;
    }
  }
  RetryCounters c = s.counters();
  EXPECT_EQ(c.calls, 50u);
  EXPECT_EQ(c.attempts, 400u);
  EXPECT_EQ(c.failures, 50u);
  EXPECT_EQ(c.exhausted, 50u);
}

TEST(RetryingStorage, StopsAtTheCallDeadline) {
  TempDir dir;
  auto faulty =
      std::make_unique<FaultInjectingStorage>(std::make_unique<LocalFsStorage>(dir / "root"), 1);
  faulty->SetAllFaults(FaultSpec{.fail_ratio = 1.0});
  ManualClock clock(1'000'000);
  SleepRecorder rec;
  rec.clock = &clock;
  RetryOptions ro;
  ro.max_attempts = 1000;
  ro.initial_backoff = milliseconds(200);
  ro.max_backoff = milliseconds(200);
  ro.clock = &clock;
  ro.sleep = rec.Fn();
  RetryingStorage s(std::move(faulty), ro);
  CallOptions opts;
  opts.timeout = milliseconds(1500);
  auto r = s.Get("x", 0, 10, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::kUnavailable);
  int64_t slept = 0;
  for (auto d : rec.sleeps) slept += d.count();
  EXPECT_LT(slept, 1500);
  EXPECT_LT(clock.MonotonicMs(), 1'000'000 + 1500);
  EXPECT_GE(rec.sleeps.size(), 7u);  // 200 ms caps with full jitter: at least 1500/200 sleeps
  EXPECT_EQ(s.counters().exhausted, 1u);
}

TEST(RetryingStorage, DoesNotRetryAnswers) {
  TempDir dir;
  SleepRecorder rec;
  RetryOptions ro;
  ro.sleep = rec.Fn();
  RetryingStorage s(std::make_unique<LocalFsStorage>(dir / "root"), ro);
  EXPECT_EQ(s.Get("missing").error().code, Errc::kNotFound);
  EXPECT_EQ(s.Put("/bad", PutSource::Memory(ToBytes("x"))).error().code, Errc::kInvalidArgument);
  EXPECT_TRUE(rec.sleeps.empty());
  EXPECT_EQ(s.counters().attempts, 2u);
  EXPECT_EQ(s.counters().failures, 2u);
  EXPECT_EQ(s.counters().exhausted, 0u);
}

// A store whose replies are lost (after the operation took effect) for the first n calls.
class LostReplies : public testing::ForwardingStorage {
 public:
  LostReplies(RemoteStorage* inner, int n) : ForwardingStorage(inner), left_(n) {}
  Status Rename(std::string_view s, std::string_view d, const CallOptions& o) override {
    Status st = inner_->Rename(s, d, o);
    if (left_-- > 0) return MakeError(Errc::kTimeout, "reply lost");
    return st;
  }
  Status Put(std::string_view p, const PutSource& src, const CallOptions& o) override {
    Status st = inner_->Put(p, src, o);
    if (left_-- > 0) return MakeError(Errc::kTimeout, "reply lost");
    return st;
  }

 private:
  int left_;
};

TEST(RetryingStorage, RetriedRenameWhoseFirstAttemptWorkedSucceeds) {
  TempDir dir;
  LocalFsStorage local(dir / "root");
  ASSERT_TRUE(local.Put("a", PutSource::Memory(ToBytes("A"))).ok());
  SleepRecorder rec;
  RetryOptions ro;
  ro.sleep = rec.Fn();
  RetryingStorage s(std::make_unique<LostReplies>(&local, 1), ro);
  EXPECT_TRUE(s.Rename("a", "b").ok());
  EXPECT_EQ(*local.Get("b"), ToBytes("A"));
  EXPECT_EQ(s.counters().retries, 1u);
  // A rename of something that never existed still fails.
  EXPECT_EQ(s.Rename("zzz", "b2").error().code, Errc::kNotFound);
}

TEST(RetryingStorage, RetriedPutReplacesCleanly) {
  TempDir dir;
  LocalFsStorage local(dir / "root");
  SleepRecorder rec;
  RetryOptions ro;
  ro.sleep = rec.Fn();
  RetryingStorage s(std::make_unique<LostReplies>(&local, 2), ro);
  Bytes data = RandomBytes(5000, 2);
  EXPECT_TRUE(s.Put("d/obj", PutSource::Memory(data)).ok());
  EXPECT_EQ(*local.Get("d/obj"), data);
  EXPECT_EQ(s.counters().attempts, 3u);
  auto names = local.List("d");
  ASSERT_EQ(names->size(), 1u);  // no temporaries from the repeated uploads
}

TEST(RetryingStorage, CancelStopsRetrying) {
  TempDir dir;
  auto faulty =
      std::make_unique<FaultInjectingStorage>(std::make_unique<LocalFsStorage>(dir / "root"), 1);
  faulty->SetAllFaults(FaultSpec{.fail_ratio = 1.0});
  RetryOptions ro;
  ro.initial_backoff = milliseconds(10'000);
  ro.max_backoff = milliseconds(10'000);
  ro.max_attempts = 100;
  RetryingStorage s(std::move(faulty), ro);  // real, cancellable sleeps
  CallOptions opts;
  opts.cancel = MakeCancelFlag();
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(100));
    opts.cancel->store(true);
  });
  auto start = std::chrono::steady_clock::now();
  auto r = s.Stat("x", opts);
  auto took = std::chrono::steady_clock::now() - start;
  canceller.join();
  EXPECT_FALSE(r.ok());
  EXPECT_LT(took, std::chrono::seconds(2));
}

}  // namespace
}  // namespace strata::tiered
