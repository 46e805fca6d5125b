// BrokerSession against both backends: registration and epochs, duplicate
// node ids, a crashed predecessor, fencing when the lease goes.
#include "cluster/broker_session.h"

#include <gtest/gtest.h>

#include "cluster/test_util.h"

namespace strata::cluster {
namespace {

using namespace std::chrono_literals;

using testing::Eventually;

BrokerSessionOptions Options(int node, int port, std::chrono::milliseconds ttl = 2000ms) {
  BrokerSessionOptions o;
  o.registration.node_id = NodeId(node);
  o.registration.listeners = {{"PLAINTEXT", "127.0.0.1", port}};
  o.registration.rack = "r1";
  o.ttl = ttl;
  return o;
}

class BrokerSessionTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = std::make_unique<testing::TestBackend>(GetParam(), "bs");
    kv_ = &backend_->kv();
    MetadataOptions o;
    o.timeout = 5000ms;
    md_ = Metadata::OpenOn(*kv_, o).value();
  }
  void TearDown() override {
    md_.reset();
    backend_.reset();
  }
  std::unique_ptr<testing::TestBackend> backend_;
  KvStore* kv_ = nullptr;
  std::unique_ptr<Metadata> md_;
};

TEST_P(BrokerSessionTest, RegistersWithAGrowingEpochAndLeavesOnShutdown) {
  BrokerEpoch first{0};
  {
    auto s = BrokerSession::Start(*md_, Options(1, 9092)).value();
    first = s->epoch();
    EXPECT_GT(first.value(), 0);
    auto b = md_->view().Broker(NodeId(1));
    ASSERT_TRUE(b);
    EXPECT_EQ(b->epoch, first);
    EXPECT_EQ(b->registration.rack, "r1");
    EXPECT_EQ(b->registration.listeners[0].port, 9092);
    // Renewed at TTL/3 for longer than a TTL: still registered.
    ASSERT_TRUE(Eventually([&] { return s->renewals() >= 4; }));
    EXPECT_TRUE(md_->view().Broker(NodeId(1)));
    EXPECT_FALSE(s->fenced());
  }
  ASSERT_TRUE(Eventually([&] { return !md_->view().Broker(NodeId(1)); }, 3s));  // revoked
  // The known-broker record says it left cleanly (a rolling restart gets a
  // longer grace from the balancer than a broker that vanished) ...
  auto known = [&] {
    for (const auto& r : md_->KnownBrokers())
      if (r.node_id == NodeId(1)) return r;
    return BrokerRegistration{};
  };
  ASSERT_TRUE(Eventually([&] { return known().left_cleanly; }, 3s));
  EXPECT_EQ(known().listeners[0].port, 9092);
  auto again = BrokerSession::Start(*md_, Options(1, 9092)).value();
  EXPECT_GT(again->epoch(), first);
  // ... until it registers again.
  ASSERT_TRUE(Eventually([&] { return !known().left_cleanly && known().node_id == NodeId(1); }));
}

TEST_P(BrokerSessionTest, ControlledShutdownKeepsTheEpochAndChangesOnlyTheState) {
  auto s = BrokerSession::Start(*md_, Options(4, 9092)).value();
  const BrokerEpoch epoch = s->epoch();
  EXPECT_TRUE(EligibleForLeadership(md_->view().Broker(NodeId(4))->registration.state));
  ASSERT_TRUE(s->EnterControlledShutdown().ok());
  auto b = md_->view().Broker(NodeId(4));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->registration.state, BrokerState::kShuttingDown);
  EXPECT_FALSE(EligibleForLeadership(b->registration.state));
  EXPECT_EQ(b->epoch, epoch);  // the same registration, not a new one
  EXPECT_EQ(b->registration.listeners[0].port, 9092);
  // Still bound to the lease, which is still renewed: it outlives a TTL.
  const int64_t renewed = s->renewals();
  ASSERT_TRUE(Eventually([&] { return s->renewals() >= renewed + 4; }));
  EXPECT_EQ(md_->view().Broker(NodeId(4))->registration.state, BrokerState::kShuttingDown);
  auto decoded = DecodeBroker(EncodeBroker(b->registration));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->state, BrokerState::kShuttingDown);
}

TEST_P(BrokerSessionTest, ALiveDuplicateNodeIdIsRefused) {
  auto live = BrokerSession::Start(*md_, Options(7, 9092)).value();
  auto start = std::chrono::steady_clock::now();
  auto dup = BrokerSession::Start(*md_, Options(7, 9093));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, Errc::kAlreadyExists);
  EXPECT_NE(dup.error().message.find("127.0.0.1:9092"), std::string::npos) << dup.error().message;
  EXPECT_GE(std::chrono::steady_clock::now() - start, 2000ms);  // it waited out a TTL first
  EXPECT_EQ(md_->view().Broker(NodeId(7))->registration.listeners[0].port, 9092);
}

TEST_P(BrokerSessionTest, ACrashedPredecessorsRegistrationIsWaitedOut) {
  // A predecessor that registered and died: its lease is never renewed.
  LeaseId dead = kv_->GrantLease(2000ms).value();
  KvOp put =
      KvOp::Put(md_->keys().Broker(NodeId(3)), EncodeBroker(Options(3, 1111).registration), dead);
  Revision old_epoch = kv_->Txn({}, std::span(&put, 1)).value().revision;
  auto s = BrokerSession::Start(*md_, Options(3, 2222)).value();
  EXPECT_GT(s->epoch().value(), old_epoch);
  ASSERT_TRUE(Eventually([&] {
    auto b = md_->view().Broker(NodeId(3));
    return b && b->registration.listeners[0].port == 2222;
  }));
}

TEST_P(BrokerSessionTest, ALostLeaseFencesUntilRegisteredAgainWithAHigherEpoch) {
  auto s = BrokerSession::Start(*md_, Options(2, 9092)).value();
  std::mutex mu;
  std::vector<std::pair<bool, BrokerEpoch>> changes;
  s->OnChange([&](bool fenced, BrokerEpoch e) {
    std::lock_guard lock(mu);
    changes.emplace_back(fenced, e);
  });
  BrokerEpoch before = s->epoch();
  LeaseId lease = md_->view().Broker(NodeId(2))->lease;
  ASSERT_TRUE(kv_->RevokeLease(lease).ok());  // as etcd expiring it would
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mu);
    return changes.size() >= 2;
  }));
  std::lock_guard lock(mu);
  EXPECT_TRUE(changes[0].first);   // fenced first
  EXPECT_FALSE(changes[1].first);  // then registered again
  EXPECT_GT(changes[1].second, before);
  EXPECT_EQ(s->epoch(), changes[1].second);
  EXPECT_TRUE(md_->view().Broker(NodeId(2)));
}

INSTANTIATE_TEST_SUITE_P(Backends, BrokerSessionTest, ::testing::Values("embedded", "etcd"),
                         [](const auto& info) { return info.param; });

TEST(BrokerSessionEtcd, AnEtcdOutageLongerThanTheTtlFencesAndRecovers) {
  testing::EtcdCluster etcd(1);
  auto kv = OpenEtcdKvStore({etcd.endpoints(), 1000ms}).value();
  MetadataOptions o;
  o.timeout = 5000ms;
  auto md = Metadata::OpenOn(*kv, o).value();
  auto s = BrokerSession::Start(*md, Options(4, 9092)).value();
  etcd.Stop(0);
  ASSERT_TRUE(Eventually([&] { return s->fenced(); }, 6s));
  etcd.Start(0);
  etcd.WaitHealthy();
  // Either the lease outlived the outage (etcd restores leases on restart)
  // or it expired and the broker registered again; both end unfenced.
  ASSERT_TRUE(Eventually([&] { return !s->fenced(); }, 20s));
  ASSERT_TRUE(Eventually([&] { return md->view().Broker(NodeId(4)).has_value(); }));
}

}  // namespace
}  // namespace strata::cluster
