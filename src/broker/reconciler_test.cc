// Reconciler over a real embedded metadata store: when passes run.
#include "broker/reconciler.h"

#include <gtest/gtest.h>

#include "broker/in_process_topics.h"
#include "cluster/test_util.h"

namespace strata::broker {
namespace {

using cluster::NodeId;

using cluster::testing::Eventually;

class ReconcilerTest : public ::testing::Test {
 protected:
  // Watches topic records; each pass records the topics the view has then.
  std::unique_ptr<Reconciler> Make(std::function<Status()> pass) {
    return std::make_unique<Reconciler>(
        broker_.metadata().view(),
        std::vector<std::string>{broker_.metadata().keys().TopicsPrefix()}, std::move(pass));
  }

  testing::InProcessTopics broker_;
  std::atomic<int> passes_{0};
  std::atomic<size_t> topics_seen_{0};
};

TEST_F(ReconcilerTest, APassRunsAtStartAndAfterEachWatchedChange) {
  auto r = Make([this] {
    topics_seen_ = broker_.metadata().view().Topics().size();
    passes_++;
    return Status::Ok();
  });
  r->Start();
  ASSERT_TRUE(Eventually([&] { return passes_ >= 1; })) << passes_;
  EXPECT_EQ(topics_seen_, 0u);

  broker_.MakeTopic("a", {{NodeId(1)}});
  ASSERT_TRUE(Eventually([&] { return topics_seen_ == 1; }))
      << "passes " << passes_ << ", topics seen " << topics_seen_;
  broker_.MakeTopic("b", {{NodeId(1)}});
  ASSERT_TRUE(Eventually([&] { return topics_seen_ == 2; }))
      << "passes " << passes_ << ", topics seen " << topics_seen_;
  r->Stop();
  EXPECT_EQ(r->passes(), passes_.load());
  EXPECT_EQ(r->failed_passes(), 0);
}

TEST_F(ReconcilerTest, AFailedPassIsRetriedWithoutAnyChange) {
  auto r = Make([this] {
    if (++passes_ <= 2) return Status(MakeError(Errc::kIoError, "a log would not open"));
    return Status::Ok();
  });
  r->Start();
  ASSERT_TRUE(Eventually([&] { return r->passes() >= 3; })) << r->passes();
  r->Stop();
  EXPECT_EQ(r->failed_passes(), 2);
  EXPECT_EQ(r->passes(), 3);  // no pass after the one that worked: nothing changed
}

TEST_F(ReconcilerTest, StopReturnsWhileThePassesAreIdle) {
  auto r = Make([this] {
    passes_++;
    return Status::Ok();
  });
  r->Start();
  ASSERT_TRUE(Eventually([&] { return passes_ >= 1; }));
  r->Stop();
  r->Stop();  // idempotent
  EXPECT_EQ(r->passes(), passes_.load());
}

}  // namespace
}  // namespace strata::broker
