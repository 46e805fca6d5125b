#include "tiered/hedged_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "tiered/fault_injecting_storage.h"
#include "tiered/local_fs_storage.h"
#include "tiered/test_util.h"

namespace strata::tiered {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
using testing::RandomBytes;
using testing::TempDir;

TEST(HedgedReader, FivePercentOfReadsDelayedTwoSecondsP99StaysLow) {
  TempDir dir;
  Bytes data = RandomBytes(1 << 20, 11);
  {
    LocalFsStorage setup(dir / "root");
    ASSERT_TRUE(setup.Put("seg.log", PutSource::Memory(data)).ok());
  }
  auto faulty = std::make_unique<FaultInjectingStorage>(
      std::make_unique<LocalFsStorage>(dir / "root"), /*seed=*/77);
  FaultInjectingStorage* faults = faulty.get();
  faults->SetFault(StorageOp::kGet, FaultSpec{.delay_ratio = 0.05, .delay = milliseconds(2000)});
  HedgedReader reader(std::move(faulty),
                      HedgeOptions{.threshold = milliseconds(50), .max_hedge_ratio = 0.2});

  constexpr int kReads = 400;
  std::vector<double> ms;
  std::mt19937_64 rng(3);
  for (int i = 0; i < kReads; ++i) {
    uint64_t off = rng() % (data.size() - 4096);
    auto start = Steady::now();
    auto got = reader.Get("seg.log", off, 4096);
    ms.push_back(std::chrono::duration<double, std::milli>(Steady::now() - start).count());
    ASSERT_TRUE(got.ok()) << got.error().message;
    ASSERT_EQ(*got, Bytes(data.begin() + off, data.begin() + off + 4096)) << i;
  }
  std::sort(ms.begin(), ms.end());
  double p50 = ms[kReads / 2], p99 = ms[kReads * 99 / 100], max = ms.back();
  std::printf("[hedge] reads=%d p50=%.2fms p99=%.2fms max=%.2fms\n", kReads, p50, p99, max);
  HedgeCounters c = reader.counters();
  FaultCounters f = faults->counters();
  std::printf("[hedge] delayed=%llu fired=%llu won=%llu skipped=%llu\n",
              (unsigned long long)f.injected_delays, (unsigned long long)c.hedges_fired,
              (unsigned long long)c.hedges_won, (unsigned long long)c.hedges_skipped);
  EXPECT_LT(p99, 500.0);              // unhedged, p99 would be 2000+ ms
  EXPECT_GE(f.injected_delays, 10u);  // the scenario really happened (5% of ~400+ reads)
  EXPECT_EQ(c.reads, uint64_t(kReads));
  EXPECT_GE(c.hedges_fired, f.injected_delays * 8 / 10);
  EXPECT_GE(c.hedges_won, c.hedges_fired * 8 / 10);
  EXPECT_EQ(c.hedges_skipped, 0u);
  EXPECT_EQ(c.failures, 0u);
}

// A scripted store: read n calls script(n, opts).
class ScriptedReads : public testing::ForwardingStorage {
 public:
  using Script = std::function<Result<Bytes>(int, const CallOptions&)>;
  explicit ScriptedReads(Script s) : ForwardingStorage(nullptr), script_(std::move(s)) {}
  Result<Bytes> Get(std::string_view, uint64_t, uint64_t, const CallOptions& o) override {
    return script_(calls_++, o);
  }
  std::atomic<int> calls_{0};

 private:
  Script script_;
};

TEST(HedgedReader, HedgeAvoidsTheFirstReadsNodeAndCancelsTheLoser) {
  std::atomic<bool> first_cancelled{false};
  std::vector<std::string> second_avoid;
  std::mutex mu;
  auto script = [&](int n, const CallOptions& o) -> Result<Bytes> {
    if (o.on_source) o.on_source(n == 0 ? "dn-slow" : "dn-fast");
    if (n == 0) {
      // Stalls until cancelled, like a read stuck on a sick DataNode.
      bool finished = SleepUnlessCancelled(milliseconds(10'000), o.cancel);
      first_cancelled = !finished;
      return Bytes{1};
    }
    std::lock_guard lock(mu);
    second_avoid = o.avoid_nodes;
    return Bytes{2};
  };
  std::vector<std::string> sources;
  auto start = Steady::now();
  {
    HedgedReader reader(std::make_unique<ScriptedReads>(script),
                        HedgeOptions{.threshold = milliseconds(30)});
    CallOptions opts;
    opts.avoid_nodes = {"dn-known-bad"};
    opts.on_source = [&](const std::string& n) {
      std::lock_guard lock(mu);
      sources.push_back(n);
    };
    auto got = reader.Get("x", 0, 1, opts);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, Bytes{2});
    EXPECT_EQ(reader.counters().hedges_fired, 1u);
    EXPECT_EQ(reader.counters().hedges_won, 1u);
  }  // the destructor waits for the cancelled loser
  EXPECT_LT(Steady::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(first_cancelled);
  EXPECT_EQ(second_avoid, (std::vector<std::string>{"dn-known-bad", "dn-slow"}));
  std::sort(sources.begin(), sources.end());
  EXPECT_EQ(sources, (std::vector<std::string>{"dn-fast", "dn-slow"}));
}

TEST(HedgedReader, FastReadsAreNeverHedged) {
  HedgedReader reader(
      std::make_unique<ScriptedReads>(
          [](int n, const CallOptions&) -> Result<Bytes> { return Bytes{uint8_t(n)}; }),
      HedgeOptions{.threshold = milliseconds(500)});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(*reader.Get("x", 0, 1), Bytes{uint8_t(i)});
  EXPECT_EQ(reader.counters().hedges_fired, 0u);
  EXPECT_EQ(reader.counters().reads, 50u);
}

TEST(HedgedReader, AnErrorWaitsForTheOtherRead) {
  // The first read is slow and then fails; the hedge is slower still but succeeds.
  HedgedReader reader(
      std::make_unique<ScriptedReads>([](int n, const CallOptions&) -> Result<Bytes> {
        std::this_thread::sleep_for(milliseconds(n == 0 ? 60 : 120));
        if (n == 0) return MakeError(Errc::kIoError, "datanode died");
        return Bytes{9};
      }),
      HedgeOptions{.threshold = milliseconds(20)});
  auto got = reader.Get("x", 0, 1);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, Bytes{9});
  EXPECT_EQ(reader.counters().hedges_won, 1u);

  // Both fail: the first read's error is returned.
  HedgedReader failing(
      std::make_unique<ScriptedReads>([](int n, const CallOptions&) -> Result<Bytes> {
        std::this_thread::sleep_for(milliseconds(60));
        return MakeError(Errc::kUnavailable, fmt::format("read {}", n));
      }),
      HedgeOptions{.threshold = milliseconds(20)});
  auto bad = failing.Get("x", 0, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "read 0");
  EXPECT_EQ(failing.counters().failures, 1u);
  EXPECT_EQ(failing.counters().hedges_fired, 1u);
}

TEST(HedgedReader, BudgetLimitsHedges) {
  // Each read outlasts the 1 ms threshold by far more than a busy machine
  // delays the hedge timer (at 15 ms, a read once finished before the hedge
  // was decided, and was neither fired nor skipped).
  auto script = [](int, const CallOptions&) -> Result<Bytes> {
    std::this_thread::sleep_for(milliseconds(60));
    return Bytes{1};
  };
  // 0.25 tokens per read, bucket of 1: at most 1 + 20 * 0.25 hedges over 20 slow reads.
  HedgedReader reader(
      std::make_unique<ScriptedReads>(script),
      HedgeOptions{.threshold = milliseconds(1), .max_hedge_ratio = 0.25, .max_burst = 1});
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(reader.Get("x", 0, 1).ok());
  HedgeCounters c = reader.counters();
  EXPECT_LE(c.hedges_fired, 6u);
  EXPECT_GE(c.hedges_fired, 4u);
  EXPECT_EQ(c.hedges_fired + c.hedges_skipped, 20u);
}

TEST(HedgedReader, CallerCancelReturnsPromptly) {
  HedgedReader reader(
      std::make_unique<ScriptedReads>([](int, const CallOptions& o) -> Result<Bytes> {
        SleepUnlessCancelled(milliseconds(5000), o.cancel);
        return Bytes{1};
      }),
      HedgeOptions{.threshold = milliseconds(10)});
  CallOptions opts;
  opts.cancel = MakeCancelFlag();
  std::thread t([&] {
    std::this_thread::sleep_for(milliseconds(100));
    opts.cancel->store(true);
  });
  auto start = Steady::now();
  auto got = reader.Get("x", 0, 1, opts);
  t.join();
  EXPECT_EQ(got.error().code, Errc::kShuttingDown);
  EXPECT_LT(Steady::now() - start, std::chrono::seconds(1));
}

}  // namespace
}  // namespace strata::tiered
