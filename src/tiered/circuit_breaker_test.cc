#include "tiered/circuit_breaker.h"

#include <gtest/gtest.h>

#include <thread>

#include "tiered/fault_injecting_storage.h"
#include "tiered/local_fs_storage.h"
#include "tiered/resilient_storage.h"
#include "tiered/test_util.h"

namespace strata::tiered {
namespace {

using std::chrono::milliseconds;
using testing::TempDir;
using testing::ToBytes;
using Transition = std::pair<BreakerState, BreakerState>;

constexpr auto kClosed = BreakerState::kClosed;
constexpr auto kOpen = BreakerState::kOpen;
constexpr auto kHalfOpen = BreakerState::kHalfOpen;

struct BreakerFixture {
  TempDir dir;
  ManualClock clock{5'000'000};
  FaultInjectingStorage* faults = nullptr;
  std::mutex mu;
  std::vector<Transition> transitions;
  std::unique_ptr<CircuitBreaker> breaker;

  explicit BreakerFixture(int threshold = 3) {
    auto f =
        std::make_unique<FaultInjectingStorage>(std::make_unique<LocalFsStorage>(dir / "r"), 1);
    faults = f.get();
    BreakerOptions o;
    o.failure_threshold = threshold;
    o.open_duration = milliseconds(1000);
    o.clock = &clock;
    o.on_transition = [this](BreakerState from, BreakerState to) {
      std::lock_guard lock(mu);
      transitions.emplace_back(from, to);
    };
    breaker = std::make_unique<CircuitBreaker>(std::move(f), o);
  }
  void Outage(bool on) { faults->SetAllFaults(FaultSpec{.fail_ratio = on ? 1.0 : 0.0}); }
};

TEST(CircuitBreaker, OpensHalfOpensAndCloses) {
  BreakerFixture fx;
  CircuitBreaker& b = *fx.breaker;
  ASSERT_TRUE(b.Put("a", PutSource::Memory(ToBytes("A"))).ok());

  fx.Outage(true);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(b.state(), kClosed) << i;
    EXPECT_EQ(b.Get("a").error().code, Errc::kUnavailable);
  }
  EXPECT_EQ(b.state(), kOpen);
  uint64_t reached = fx.faults->counters().calls;

  // Open: fail fast without touching the store.
  for (int i = 0; i < 10; ++i) {
    auto r = b.Stat("a");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::kUnavailable);
    EXPECT_NE(r.error().message.find("circuit breaker open"), std::string::npos);
    EXPECT_NE(r.error().message.find("injected fault"), std::string::npos);  // the cause
  }
  EXPECT_EQ(fx.faults->counters().calls, reached);

  // Cool-down over but the store is still down: the probe fails and it re-opens.
  fx.clock.Advance(999);
  EXPECT_FALSE(b.Stat("a").ok());
  EXPECT_EQ(fx.faults->counters().calls, reached);
  fx.clock.Advance(1);
  EXPECT_EQ(b.Stat("a").error().code, Errc::kUnavailable);
  EXPECT_EQ(fx.faults->counters().calls, reached + 1);
  EXPECT_EQ(b.state(), kOpen);
  EXPECT_FALSE(b.Stat("a").ok());  // a fresh cool-down started
  EXPECT_EQ(fx.faults->counters().calls, reached + 1);

  // The store is back: after the cool-down the probe succeeds and closes the breaker.
  fx.Outage(false);
  fx.clock.Advance(1000);
  auto got = b.Get("a");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, ToBytes("A"));
  EXPECT_EQ(b.state(), kClosed);
  EXPECT_TRUE(b.Stat("a").ok());

  EXPECT_EQ(fx.transitions, (std::vector<Transition>{{kClosed, kOpen},
                                                     {kOpen, kHalfOpen},
                                                     {kHalfOpen, kOpen},
                                                     {kOpen, kHalfOpen},
                                                     {kHalfOpen, kClosed}}));
  BreakerCounters c = b.counters();
  EXPECT_EQ(c.state, kClosed);
  EXPECT_EQ(c.opened, 2u);
  EXPECT_EQ(c.half_opened, 2u);
  EXPECT_EQ(c.closed, 1u);
  EXPECT_EQ(c.failures, 4u);
  EXPECT_EQ(c.rejected, 12u);
  EXPECT_EQ(c.calls, 7u);  // put, 3 failed gets, 2 probes, stat
}

TEST(CircuitBreaker, AnswersAndSuccessesKeepItClosed) {
  BreakerFixture fx;
  CircuitBreaker& b = *fx.breaker;
  for (int i = 0; i < 20; ++i) EXPECT_EQ(b.Get("missing").error().code, Errc::kNotFound);
  EXPECT_EQ(b.state(), kClosed);
  // Failures must be consecutive.
  for (int round = 0; round < 5; ++round) {
    fx.Outage(true);
    EXPECT_FALSE(b.Stat("x").ok());
    EXPECT_FALSE(b.Stat("x").ok());
    fx.Outage(false);
    EXPECT_TRUE(b.Stat("x").ok());
  }
  EXPECT_EQ(b.state(), kClosed);
  EXPECT_TRUE(fx.transitions.empty());
}

TEST(CircuitBreaker, HalfOpenLetsOnlyOneProbeThrough) {
  BreakerFixture fx(/*threshold=*/1);
  CircuitBreaker& b = *fx.breaker;
  fx.Outage(true);
  EXPECT_FALSE(b.Stat("x").ok());
  ASSERT_EQ(b.state(), kOpen);
  fx.Outage(false);
  fx.faults->SetFault(StorageOp::kList, FaultSpec{.delay_ratio = 1.0, .delay = milliseconds(300)});
  fx.clock.Advance(1000);
  std::thread probe([&] { EXPECT_TRUE(b.List("").ok()); });  // slow probe
  while (b.state() != kHalfOpen) std::this_thread::yield();
  auto r = b.Stat("x");  // while the probe is in flight
  EXPECT_EQ(r.error().code, Errc::kUnavailable);
  probe.join();
  EXPECT_EQ(b.state(), kClosed);
  EXPECT_TRUE(b.Stat("x").ok());
}

TEST(CircuitBreaker, CancelledProbeGivesNoVerdict) {
  BreakerFixture fx(/*threshold=*/1);
  CircuitBreaker& b = *fx.breaker;
  fx.Outage(true);
  EXPECT_FALSE(b.Stat("x").ok());
  fx.Outage(false);
  fx.faults->SetFault(StorageOp::kStat, FaultSpec{.delay_ratio = 1.0, .delay = milliseconds(300)});
  fx.clock.Advance(1000);
  CallOptions cancelled;
  cancelled.cancel = MakeCancelFlag();
  cancelled.cancel->store(true);
  EXPECT_EQ(b.Stat("x", cancelled).error().code, Errc::kShuttingDown);
  EXPECT_EQ(b.state(), kHalfOpen);
  fx.faults->SetFault(StorageOp::kStat, FaultSpec{});
  EXPECT_TRUE(b.Stat("x").ok());  // the next call is the probe
  EXPECT_EQ(b.state(), kClosed);
}

TEST(ResilientStorage, OutageOpensBreakerAndRecoveryClosesIt) {
  TempDir dir;
  auto f = std::make_unique<FaultInjectingStorage>(std::make_unique<LocalFsStorage>(dir / "r"), 3);
  FaultInjectingStorage* faults = f.get();
  ManualClock clock(1'000);
  ResilienceOptions o;
  o.retry.max_attempts = 3;
  o.retry.sleep = [](milliseconds, const CancelFlag&) { return true; };
  o.breaker.failure_threshold = 2;
  o.breaker.open_duration = milliseconds(500);
  o.breaker.clock = &clock;
  o.hedge.threshold = milliseconds(1000);
  ResilientStorage rs = MakeResilientStorage(std::move(f), o);
  ASSERT_TRUE(rs.storage->Put("a", PutSource::Memory(ToBytes("A"))).ok());

  faults->SetAllFaults(FaultSpec{.fail_ratio = 1.0});
  EXPECT_FALSE(rs.storage->Get("a").ok());
  EXPECT_FALSE(rs.storage->Get("a").ok());
  EXPECT_EQ(rs.breaker->state(), BreakerState::kOpen);
  EXPECT_EQ(faults->counters().injected_failures, 6u);  // 2 calls x 3 attempts
  EXPECT_FALSE(rs.storage->Get("a").ok());
  EXPECT_EQ(faults->counters().injected_failures, 6u);  // failed fast

  faults->SetAllFaults(FaultSpec{});
  clock.Advance(500);
  EXPECT_EQ(*rs.storage->Get("a"), ToBytes("A"));
  EXPECT_EQ(rs.breaker->state(), BreakerState::kClosed);
  ResilienceCounters c = rs.counters();
  EXPECT_EQ(c.retry.retries, 4u);
  EXPECT_EQ(c.retry.exhausted, 2u);
  EXPECT_EQ(c.hedge.reads, 7u);  // every Get attempt went through the hedged reader
  EXPECT_EQ(c.breaker.rejected, 1u);
  EXPECT_EQ(c.breaker.opened, 1u);
  EXPECT_EQ(c.breaker.closed, 1u);
}

}  // namespace
}  // namespace strata::tiered
