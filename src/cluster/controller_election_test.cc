// ControllerElection on both backends: one controller at a time, failover
// when its lease goes, and a deposed controller's writes are fenced.
#include "cluster/controller_election.h"

#include <gtest/gtest.h>

#include "cluster/controller.h"
#include "cluster/records.h"
#include "cluster/test_util.h"

namespace strata::cluster {
namespace {

using namespace std::chrono_literals;

using testing::Eventually;

// One broker: its metadata handle, session and election.
struct Node {
  std::unique_ptr<Metadata> md;
  std::unique_ptr<BrokerSession> session;
  std::unique_ptr<ControllerElection> election;
};

class ControllerElectionTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = std::make_unique<testing::TestBackend>(GetParam(), "ce");
    kv_ = &backend_->kv();
  }
  void TearDown() override {
    nodes_.clear();
    backend_.reset();
  }
  Node& Add(int id, int64_t new_log_dir_epoch = -1) {
    Node n;
    MetadataOptions o;
    o.local_node = NodeId(id);
    o.timeout = 5000ms;
    n.md = Metadata::OpenOn(*kv_, o).value();
    BrokerSessionOptions so;
    so.registration.node_id = NodeId(id);
    so.registration.listeners = {{"PLAINTEXT", "127.0.0.1", 9000 + id}};
    so.ttl = 2000ms;
    so.registration.new_log_dir_epoch = new_log_dir_epoch;
    n.session = BrokerSession::Start(*n.md, so).value();
    n.election = ControllerElection::Start(*n.md, *n.session, nullptr);
    nodes_.push_back(std::move(n));
    return nodes_.back();
  }
  int Controllers() {
    int c = 0;
    for (auto& n : nodes_) c += n.election && n.election->active();
    return c;
  }

  std::unique_ptr<testing::TestBackend> backend_;
  KvStore* kv_ = nullptr;
  std::vector<Node> nodes_;
};

TEST_P(ControllerElectionTest, OneControllerThenFailoverWithAFence) {
  Add(1);
  Add(2);
  Add(3);
  ASSERT_TRUE(Eventually([&] { return Controllers() == 1; }));
  int winner = -1;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].election->active()) winner = static_cast<int>(i);
  }
  Node& old = nodes_[static_cast<size_t>(winner)];
  KvCompare old_fence = old.election->Fence();
  Revision old_rev = old.election->election_revision();
  // Every node's view names the winner.
  for (auto& n : nodes_) {
    ASSERT_TRUE(Eventually([&] {
      auto c = n.md->view().Controller();
      return c && c->node == old.session->node();
    }));
  }
  // The controller's lease goes (as when its broker is SIGKILLed and etcd
  // expires the lease): another node takes over, with a higher revision.
  ASSERT_TRUE(kv_->RevokeLease(old.session->lease()).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        for (size_t i = 0; i < nodes_.size(); ++i) {
          if (static_cast<int>(i) != winner && nodes_[i].election->active()) return true;
        }
        return false;
      },
      10s));
  Revision new_rev = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (static_cast<int>(i) != winner && nodes_[i].election->active())
      new_rev = nodes_[i].election->election_revision();
  }
  EXPECT_GT(new_rev, old_rev);
  // A write under the old controller's fence is refused, whatever it believes.
  KvOp write = KvOp::Put(old.md->keys().prefix() + "fenced-write", "x");
  EXPECT_FALSE(kv_->Txn(std::span(&old_fence, 1), std::span(&write, 1)).value().succeeded);
  // At most one controller at any time from here on.
  ASSERT_TRUE(Eventually([&] { return Controllers() == 1; }));
}

TEST_P(ControllerElectionTest, ACleanShutdownHandsOverAtOnce) {
  Add(1);
  ASSERT_TRUE(Eventually([&] { return Controllers() == 1; }));
  Add(2);
  ASSERT_TRUE(nodes_[0].election->active());
  auto start = std::chrono::steady_clock::now();
  nodes_[0].election.reset();  // resigns
  ASSERT_TRUE(Eventually([&] { return nodes_[1].election->active(); }, 5s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2000ms);  // well within a lease TTL
}

// ElectLeaders as the controller runs it: a preferred election moves the
// leadership to the first replica under the fence, with higher epochs; it is
// not needed twice; "all" finds nothing to do then; a non-controller is fenced.
TEST_P(ControllerElectionTest, ANewControllerDeletesPartitionRecordsOfUnfinishedCreations) {
  // Before any controller: a topic created whole, and the partition records
  // of one whose creator died before writing its topic record.
  Add(1);
  ASSERT_TRUE(Eventually([&] { return Controllers() == 1; }));
  Node& first = nodes_[0];
  auto kept = first.md->CreateTopic({.name = "kept", .partitions = 2});
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  const std::string kept_id = UuidToBase64(kept->id);
  const std::string orphan_id = UuidToBase64(RandomTopicId());
  PartitionRecord rec;
  rec.replicas = rec.isr = {NodeId(1)};
  rec.leader = NodeId(1);
  std::vector<KvOp> puts;
  for (int p = 0; p < 3; ++p) {
    puts.push_back(KvOp::Put(first.md->keys().Partition(orphan_id, p), EncodePartition(rec)));
  }
  auto put = kv_->Txn({}, puts);
  ASSERT_TRUE(put.ok() && put->succeeded);
  ASSERT_TRUE(first.md->view().WaitForRevision(put->revision, 5000ms));
  // The first controller's term began before those records: it must not
  // take them (only a later term may, once their creator is fenced).
  {
    Controller controller(*first.md, *first.election, {});
    ASSERT_TRUE(Eventually([&] { return controller.active(); }));
  }
  EXPECT_EQ(first.md->view().Partitions(orphan_id).size(), 3u);
  // A new term: the old controller's session ends, another broker wins.
  Add(2);
  nodes_[0].election.reset();
  nodes_[0].session.reset();
  Node& second = nodes_[1];
  ASSERT_TRUE(Eventually([&] { return second.election->active(); }));
  Controller controller(*second.md, *second.election, {});
  ASSERT_TRUE(Eventually([&] { return second.md->view().Partitions(orphan_id).empty(); }));
  EXPECT_EQ(second.md->view().Partitions(kept_id).size(), 2u);
  EXPECT_TRUE(second.md->view().Topic("kept").has_value());
}

// The view leaves out a topic record it cannot read; that topic's partition
// records are not an unfinished creation, so nothing is deleted then.
TEST_P(ControllerElectionTest, AnUnreadableTopicRecordStopsTheCleanupOfUnfinishedCreations) {
  Add(1);
  ASSERT_TRUE(Eventually([&] { return Controllers() == 1; }));
  Node& first = nodes_[0];
  const std::string id = UuidToBase64(RandomTopicId());
  PartitionRecord rec;
  rec.replicas = rec.isr = {NodeId(1)};
  rec.leader = NodeId(1);
  std::vector<KvOp> puts = {KvOp::Put(first.md->keys().Partition(id, 0), EncodePartition(rec)),
                            KvOp::Put(first.md->keys().Topic("unreadable"), "{not json")};
  auto put = kv_->Txn({}, puts);
  ASSERT_TRUE(put.ok() && put->succeeded);
  Add(2);
  nodes_[0].election.reset();
  nodes_[0].session.reset();
  Node& second = nodes_[1];
  ASSERT_TRUE(Eventually([&] { return second.election->active(); }));
  ASSERT_TRUE(second.md->view().WaitForRevision(put->revision, 5000ms));
  Controller controller(*second.md, *second.election, {});
  ASSERT_TRUE(Eventually([&] { return controller.passes() >= 1; }));
  EXPECT_EQ(second.md->view().Partitions(id).size(), 1u);
}

TEST_P(ControllerElectionTest, RequestedElectionsMoveLeadershipUnderTheFence) {
  Add(1);
  ASSERT_TRUE(Eventually([&] { return Controllers() == 1; }));
  Add(2);
  Node& ctl = nodes_[0];
  Controller controller(*ctl.md, *ctl.election, {});
  auto topic = ctl.md->CreateTopic({.name = "t", .partitions = 1});
  ASSERT_TRUE(topic.ok()) << topic.error().message;
  const std::string id = UuidToBase64(topic->id);
  PartitionRecord rec;
  rec.replicas = {NodeId(2), NodeId(1)};
  rec.isr = {NodeId(1), NodeId(2)};
  rec.leader = NodeId(1);
  rec.leader_epoch = LeaderEpoch(3);
  rec.partition_epoch = PartitionEpoch(3);
  KvOp put = KvOp::Put(ctl.md->keys().Partition(id, 0), EncodePartition(rec));
  ASSERT_TRUE(kv_->Txn({}, std::span(&put, 1)).ok());
  ASSERT_TRUE(Eventually([&] {
    auto p = ctl.md->view().Partition(id, 0);
    return p && p->record.leader_epoch == LeaderEpoch(3) && ctl.md->view().Broker(NodeId(2));
  }));

  auto moved = controller.RunElections(ElectionType::kPreferred,
                                       std::vector<ElectionTarget>{{"t", 0}, {"nope", 0}});
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  ASSERT_EQ(moved->size(), 2u);
  EXPECT_EQ((*moved)[0].outcome, ElectionOutcome::kElected);
  EXPECT_TRUE((*moved)[1].unknown);
  auto now = ctl.md->view().Partition(id, 0).value().record;  // read-your-writes
  EXPECT_EQ(now.leader, NodeId(2));
  EXPECT_EQ(now.leader_epoch, LeaderEpoch(4));
  EXPECT_EQ(now.partition_epoch, PartitionEpoch(4));
  auto again =
      controller.RunElections(ElectionType::kPreferred, std::vector<ElectionTarget>{{"t", 0}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0].outcome, ElectionOutcome::kNotNeeded);
  auto all = controller.RunElections(ElectionType::kPreferred, std::nullopt);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());

  Controller other(*nodes_[1].md, *nodes_[1].election, {});
  auto refused = other.RunElections(ElectionType::kPreferred, std::nullopt);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Errc::kFenced);
}

// Writes a partition record straight to the store and waits for `md`'s view.
std::string PutPartition(Metadata& md, KvStore& kv, const std::string& topic, PartitionRecord rec) {
  auto created = md.CreateTopic({.name = topic, .partitions = 1});
  EXPECT_TRUE(created.ok()) << created.error().message;
  const std::string id = UuidToBase64(created->id);
  KvOp put = KvOp::Put(md.keys().Partition(id, 0), EncodePartition(rec));
  Revision r = kv.Txn({}, std::span(&put, 1)).value().revision;
  md.view().WaitForRevision(r, 5s);
  return id;
}

// A broker back with an empty log directory, asked for as preferred leader
// in the moment it registers, before or after the controller's own pass
// saw it: the record still lists it as the only ISR member, but it lost
// what that counted on, so it is never elected and the record marks it.
TEST_P(ControllerElectionTest, APreferredElectionNeverPicksABrokerBackWithAnEmptyDisk) {
  Add(1);
  ASSERT_TRUE(Eventually([&] { return Controllers() == 1; }));
  // Not a Node&: Add grows nodes_. The objects themselves stay put.
  Metadata& md = *nodes_[0].md;
  ControllerElection& election = *nodes_[0].election;
  auto created = md.CreateTopic(
      {.name = "wiped", .partitions = 1, .configs = {{"remote.storage.enable", "true"}}});
  ASSERT_TRUE(created.ok()) << created.error().message;
  const std::string id = UuidToBase64(created->id);
  PartitionRecord rec;  // broker 2, the last in-sync replica, died: offline
  rec.replicas = {NodeId(2), NodeId(1)};
  rec.isr = {NodeId(2)};
  rec.leader = kNoNode;
  rec.leader_epoch = LeaderEpoch(3);
  KvOp put = KvOp::Put(md.keys().Partition(id, 0), EncodePartition(rec));
  ASSERT_TRUE(kv_->Txn({}, std::span(&put, 1)).ok());
  Controller controller(md, election, {});
  Add(2, /*new_log_dir_epoch=*/0);  // back, with an empty disk
  for (int i = 0; i < 20; ++i) {
    auto r = controller.RunElections(ElectionType::kPreferred,
                                     std::vector<ElectionTarget>{{"wiped", 0}});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_NE((*r)[0].outcome, ElectionOutcome::kElected);
    EXPECT_NE(md.view().Partition(id, 0)->record.leader, NodeId(2));
  }
  ASSERT_TRUE(Eventually([&] {
    const auto now = md.view().Partition(id, 0)->record;
    return now.non_contiguous == std::vector<NodeId>{NodeId(2)};
  }));
  EXPECT_EQ(md.view().Partition(id, 0)->record.leader, kNoNode);
}

// A broker back with an empty log directory while its partition's leader
// rewrites the record (an ISR change made after the registration that still
// lists it): the controller takes it out of the ISR all the same, marks the
// record, and then leaves the leader's taking the rebuilt replica back alone.
TEST_P(ControllerElectionTest, AnIsrWrittenAfterAWipedBrokerRegisteredStillForgetsIt) {
  Add(1);
  ASSERT_TRUE(Eventually([&] { return Controllers() == 1; }));
  Metadata& md = *nodes_[0].md;
  ControllerElection& election = *nodes_[0].election;
  PartitionRecord rec;
  rec.replicas = rec.isr = {NodeId(1), NodeId(2)};
  rec.leader = NodeId(1);
  rec.leader_epoch = LeaderEpoch(3);
  const std::string id = PutPartition(md, *kv_, "wiped-isr", rec);
  Add(2, /*new_log_dir_epoch=*/0);  // back, with an empty disk
  ASSERT_TRUE(Eventually([&] { return md.view().Broker(NodeId(2)).has_value(); }));
  const Revision lost_before = md.view().Broker(NodeId(2))->epoch.value();
  // The leader's ISR change, written after the registration, keeps broker 2.
  rec.partition_epoch = PartitionEpoch(1);
  KvOp put = KvOp::Put(md.keys().Partition(id, 0), EncodePartition(rec));
  auto written = kv_->Txn({}, std::span(&put, 1));
  ASSERT_TRUE(written.ok() && written->succeeded);
  ASSERT_GT(written->revision, lost_before);
  ASSERT_TRUE(md.view().WaitForRevision(written->revision, 5000ms));
  auto controller = std::make_unique<Controller>(md, election, ControllerOptions{});
  ASSERT_TRUE(Eventually([&] {
    return md.view().Partition(id, 0)->record.isr == std::vector<NodeId>{NodeId(1)};
  })) << JoinIds(md.view().Partition(id, 0)->record.isr);
  controller.reset();
  PartitionRecord forgot = md.view().Partition(id, 0)->record;
  EXPECT_EQ(forgot.non_contiguous, std::vector<NodeId>{NodeId(2)});
  EXPECT_EQ(forgot.forgot_lost_data, (std::map<NodeId, int64_t>{{NodeId(2), lost_before}}));
  EXPECT_EQ(forgot.leader, NodeId(1));
  // The leader takes the rebuilt replica back (the mark kept, as every
  // writer keeps the fields it does not change): it stays.
  forgot.isr = {NodeId(1), NodeId(2)};
  forgot.non_contiguous.clear();
  forgot.partition_epoch = PartitionEpoch(forgot.partition_epoch.value() + 1);
  put = KvOp::Put(md.keys().Partition(id, 0), EncodePartition(forgot));
  written = kv_->Txn({}, std::span(&put, 1));
  ASSERT_TRUE(written.ok() && written->succeeded);
  ASSERT_TRUE(md.view().WaitForRevision(written->revision, 5000ms));
  // A controller started now makes a whole pass over what the view holds.
  controller = std::make_unique<Controller>(md, election, ControllerOptions{});
  ASSERT_TRUE(Eventually([&] { return controller->passes() >= 1; }));
  EXPECT_EQ(md.view().Partition(id, 0)->record, forgot);
}

// A broker back with an empty log directory whose replica was out of the
// ISR then (nothing to forget): once its rebuilt replica catches up, the
// leader's AlterPartition takes it in with the broker epoch it fetched
// under (KIP-903), which marks the record, and the controller leaves it
// there. A join on fetches from before it registered again is refused.
TEST_P(ControllerElectionTest, ARebuiltReplicaJoinsTheIsrOnFetchesFromItsNewRegistrationOnly) {
  Add(1);
  ASSERT_TRUE(Eventually([&] { return Controllers() == 1; }));
  Metadata& md = *nodes_[0].md;
  ControllerElection& election = *nodes_[0].election;
  PartitionRecord rec;
  rec.replicas = {NodeId(1), NodeId(2)};
  rec.isr = {NodeId(1)};
  rec.leader = NodeId(1);
  rec.leader_epoch = LeaderEpoch(3);
  const std::string id = PutPartition(md, *kv_, "rebuilt", rec);
  Add(2, /*new_log_dir_epoch=*/0);  // back, with an empty disk
  ASSERT_TRUE(Eventually([&] { return md.view().Broker(NodeId(2)).has_value(); }));
  const int64_t epoch = md.view().Broker(NodeId(2))->epoch.value();
  auto controller = std::make_unique<Controller>(md, election, ControllerOptions{});
  ASSERT_TRUE(Eventually([&] { return controller->passes() >= 1; }));
  const PartitionRecord before = md.view().Partition(id, 0)->record;
  EXPECT_EQ(before.isr, std::vector<NodeId>{NodeId(1)});
  EXPECT_TRUE(before.forgot_lost_data.empty());  // it counted on nothing of broker 2's
  const std::vector<NodeId> both{NodeId(1), NodeId(2)};
  auto stale = md.AlterPartition(id, 0, NodeId(1), before.leader_epoch, before.partition_epoch,
                                 {both, {}, {{NodeId(2), epoch - 1}}}, 1);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, Errc::kInvalidArgument) << stale.error().message;
  auto joined = md.AlterPartition(id, 0, NodeId(1), before.leader_epoch, before.partition_epoch,
                                  {both, {}, {{NodeId(2), epoch}}}, 1);
  ASSERT_TRUE(joined.ok()) << joined.error().message;
  EXPECT_EQ(joined->forgot_lost_data, (std::map<NodeId, int64_t>{{NodeId(2), epoch}}));
  ASSERT_TRUE(Eventually([&] { return md.view().Partition(id, 0)->record == *joined; }));
  // A controller started now makes a whole pass over what the view holds.
  controller = std::make_unique<Controller>(md, election, ControllerOptions{});
  ASSERT_TRUE(Eventually([&] { return controller->passes() >= 1; }));
  EXPECT_EQ(md.view().Partition(id, 0)->record, *joined);
}

// Controlled shutdown as the controller runs it: a broker whose registration
// says "controlled_shutdown" loses its leadership and ISR membership to a
// live in-sync replica while it is still registered.
TEST_P(ControllerElectionTest, ABrokerInControlledShutdownHandsOverLeadershipAndIsr) {
  Add(1);
  ASSERT_TRUE(Eventually([&] { return Controllers() == 1; }));
  Add(2);
  Node& ctl = nodes_[0];
  PartitionRecord rec;
  rec.replicas = rec.isr = {NodeId(2), NodeId(1)};
  rec.leader = NodeId(2);
  rec.leader_epoch = LeaderEpoch(1);
  const std::string id = PutPartition(*ctl.md, *kv_, "t", rec);
  Controller controller(*ctl.md, *ctl.election, {});
  ASSERT_TRUE(nodes_[1].session->EnterControlledShutdown().ok());
  ASSERT_TRUE(Eventually([&] {
    return ctl.md->view().Partition(id, 0)->record.leader == NodeId(1);
  })) << ctl.md->view().Partition(id, 0)->record.leader.value();
  auto now = ctl.md->view().Partition(id, 0)->record;
  EXPECT_EQ(now.isr, std::vector<NodeId>{NodeId(1)});
  EXPECT_EQ(now.leader_epoch, LeaderEpoch(2));
  EXPECT_TRUE(ctl.md->view().Broker(NodeId(2)));  // still registered meanwhile
}

// With no live in-sync replica, only a topic that allows unclean election
// gets a leader from outside the ISR.
TEST_P(ControllerElectionTest, UncleanElectionOnlyForTopicsThatAllowIt) {
  Add(1);
  ASSERT_TRUE(Eventually([&] { return Controllers() == 1; }));
  Node& ctl = nodes_[0];
  PartitionRecord rec;
  rec.replicas = {NodeId(3), NodeId(1)};
  rec.isr = {NodeId(3)};  // broker 3 is gone
  rec.leader = kNoNode;
  const std::string clean = PutPartition(*ctl.md, *kv_, "clean", rec);
  const std::string unclean = PutPartition(*ctl.md, *kv_, "unclean", rec);
  Controller controller(*ctl.md, *ctl.election, {.unclean_allowed = [](const TopicRecord& t) {
    return t.name == "unclean";
  }});
  ASSERT_TRUE(
      Eventually([&] { return ctl.md->view().Partition(unclean, 0)->record.leader == NodeId(1); }));
  EXPECT_EQ(ctl.md->view().Partition(unclean, 0)->record.isr, std::vector<NodeId>{NodeId(1)});
  EXPECT_EQ(ctl.md->view().Partition(clean, 0)->record.leader, kNoNode);
  EXPECT_EQ(ctl.md->view().Partition(clean, 0)->record.isr, std::vector<NodeId>{NodeId(3)});
}

// A reassignment as the controller runs it: started under the fence (the
// target joins the replicas, nothing leaves yet), completed by the
// controller's pass once the ISR holds the target (the removed leader hands
// over at a new epoch), refused for a broker that is not the controller.
TEST_P(ControllerElectionTest, AReassignmentCompletesOnceTheTargetIsInSync) {
  Add(1);
  ASSERT_TRUE(Eventually([&] { return Controllers() == 1; }));
  Add(2);
  Add(3);
  Node& ctl = nodes_[0];
  ctl.md->SetControllerFence([&ctl]() -> std::optional<KvCompare> {
    if (!ctl.election->active()) return std::nullopt;
    return ctl.election->Fence();
  });
  Controller controller(*ctl.md, *ctl.election, {});
  ASSERT_TRUE(Eventually([&] { return ctl.md->view().Brokers().size() == 3; }));
  PartitionRecord rec;
  rec.replicas = rec.isr = {NodeId(1), NodeId(2)};
  rec.leader = NodeId(1);
  rec.leader_epoch = LeaderEpoch(2);
  rec.partition_epoch = PartitionEpoch(2);
  const std::string id = PutPartition(*ctl.md, *kv_, "moving", rec);

  auto started = ctl.md->AlterReassignment(id, 0, std::vector<NodeId>{NodeId(2), NodeId(3)});
  ASSERT_TRUE(started.ok()) << started.error().message;
  ASSERT_EQ(started->error, ReassignmentError::kNone) << started->message;
  auto now = ctl.md->view().Partition(id, 0).value();
  EXPECT_EQ(now.record.replicas, (std::vector<NodeId>{NodeId(2), NodeId(3), NodeId(1)}));
  EXPECT_EQ(now.record.adding, std::vector<NodeId>{NodeId(3)});
  EXPECT_EQ(now.record.leader, NodeId(1));
  // The new replica holds nothing yet: not contiguous with remote storage
  // until its leader says so, and no ISR may hold it meanwhile.
  EXPECT_EQ(now.record.non_contiguous, std::vector<NodeId>{NodeId(3)});
  auto gapped =
      ctl.md->AlterPartition(id, 0, NodeId(1), now.record.leader_epoch, now.record.partition_epoch,
                             {{NodeId(2), NodeId(3), NodeId(1)}, {NodeId(3)}}, 1);
  ASSERT_FALSE(gapped.ok());
  EXPECT_EQ(gapped.error().code, Errc::kInvalidArgument) << gapped.error().message;

  // The leader takes the new replica into the ISR once it caught up.
  auto joined =
      ctl.md->AlterPartition(id, 0, NodeId(1), now.record.leader_epoch, now.record.partition_epoch,
                             {{NodeId(2), NodeId(3), NodeId(1)}, {}}, 1);
  ASSERT_TRUE(joined.ok()) << joined.error().message;
  ASSERT_TRUE(Eventually([&] {
    auto p = ctl.md->view().Partition(id, 0);
    return p && p->record.adding.empty() && p->record.removing.empty();
  }));
  auto done = ctl.md->view().Partition(id, 0).value().record;
  EXPECT_EQ(done.replicas, (std::vector<NodeId>{NodeId(2), NodeId(3)}));
  EXPECT_EQ(done.isr, (std::vector<NodeId>{NodeId(2), NodeId(3)}));
  EXPECT_EQ(done.leader, NodeId(2));
  EXPECT_GT(done.leader_epoch, now.record.leader_epoch);

  auto nothing = ctl.md->AlterReassignment(id, 0, std::nullopt);
  ASSERT_TRUE(nothing.ok());
  EXPECT_EQ(nothing->error, ReassignmentError::kNoReassignmentInProgress);
  nodes_[1].md->SetControllerFence([&]() -> std::optional<KvCompare> {
    if (!nodes_[1].election->active()) return std::nullopt;
    return nodes_[1].election->Fence();
  });
  auto refused = nodes_[1].md->AlterReassignment(id, 0, std::vector<NodeId>{NodeId(1), NodeId(3)});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Errc::kFenced);
}

INSTANTIATE_TEST_SUITE_P(Backends, ControllerElectionTest, ::testing::Values("embedded", "etcd"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace strata::cluster
