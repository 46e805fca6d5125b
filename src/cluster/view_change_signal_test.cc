// ViewChangeSignal on a real (embedded) store: a change under a watched
// prefix wakes a waiting thread once, other changes do not, Stop ends any
// wait, and a pause sleeps through changes.
#include "cluster/view_change_signal.h"

#include <gtest/gtest.h>

#include <thread>

#include "cluster/metadata.h"
#include "cluster/test_util.h"

namespace strata::cluster {
namespace {

using namespace std::chrono_literals;
using Clock = ViewChangeSignal::Clock;

std::unique_ptr<Metadata> Open(KvStore& kv, int node) {
  MetadataOptions o;
  o.local_node = NodeId(node);
  o.timeout = 5000ms;
  return Metadata::OpenOn(kv, o).value();
}

TEST(ViewChangeSignal, AChangeUnderAWatchedPrefixWakesAWaiterOnceAndOtherChangesDoNot) {
  testing::TestBackend backend("embedded", "signal");
  auto writer = Open(backend.kv(), 1);
  auto watcher = Open(backend.kv(), 2);
  ViewChangeSignal signal(watcher->view(), {watcher->keys().TopicsPrefix()});
  EXPECT_TRUE(signal.WaitUntil(Clock::now()).changed);   // starts as changed
  EXPECT_FALSE(signal.WaitUntil(Clock::now()).changed);  // and says so once

  ASSERT_TRUE(writer
                  ->UpdateBrokerConfigs("default",
                                        [](auto& c) {
                                          c["log.retention.ms"] = "1000";
                                          return Status::Ok();
                                        })
                  .ok());
  ASSERT_TRUE(testing::Eventually([&] { return watcher->BrokerConfigs("default").size() == 1; }));
  EXPECT_FALSE(signal.WaitUntil(Clock::now() + 200ms).changed);

  // A waiter on another thread wakes when the topic's record reaches the view.
  ViewChangeSignal::Wake woken;
  std::thread waiter([&] { woken = signal.WaitUntil(Clock::now() + 30s); });
  ASSERT_TRUE(writer->CreateTopic({.name = "orders", .partitions = 1}).ok());
  waiter.join();
  EXPECT_TRUE(woken.changed);
  EXPECT_FALSE(woken.stopping);
  EXPECT_TRUE(watcher->GetTopic("orders").has_value());
}

TEST(ViewChangeSignal, StopEndsAWaitAndAPauseSleepsThroughChanges) {
  testing::TestBackend backend("embedded", "signal-stop");
  auto metadata = Open(backend.kv(), 1);
  ViewChangeSignal signal(metadata->view(), {metadata->keys().TopicsPrefix()});
  signal.MarkChanged();
  EXPECT_FALSE(signal.PauseUntil(Clock::now() + 50ms));  // a change does not end a pause
  EXPECT_TRUE(signal.WaitUntil(Clock::now()).changed);   // nor is it lost by one

  ViewChangeSignal::Wake woken;
  std::thread waiter([&] { woken = signal.WaitUntil(Clock::time_point::max()); });
  signal.Stop();
  waiter.join();
  EXPECT_TRUE(woken.stopping);
  EXPECT_TRUE(signal.stopping());
  EXPECT_TRUE(signal.PauseUntil(Clock::time_point::max()));
}

}  // namespace
}  // namespace strata::cluster
