// Transactional offset commits (TxnOffsetCommit): held pending until the
// transaction's marker reaches the group's partition, applied on COMMIT,
// dropped on ABORT, unstable for read_committed fetches meanwhile, and the
// same after a restart that replays the batches and markers from the log.
#include <gtest/gtest.h>

#include "coordinator/coordinator_test_util.h"
#include "coordinator/key_partitioner.h"
#include "protocol/control_record.h"
#include "protocol/error_code.h"

namespace strata::coordinator {
namespace {

using protocol::ErrorCode;
using testing::CoordinatorTest;

class TxnOffsetsTest : public CoordinatorTest {
 protected:
  protocol::TxnOffsetCommitResponse TxnCommit(const std::string& group, int64_t producer_id,
                                              const std::string& topic, int32_t partition,
                                              int64_t offset, int32_t generation = -1,
                                              const std::string& member = "") {
    protocol::TxnOffsetCommitRequest req;
    req.transactional_id = "tx";
    req.group_id = group;
    req.producer_id = producer_id;
    req.producer_epoch = 0;
    req.generation_id = generation;
    req.member_id = member;
    auto& t = req.topics.emplace_back();
    t.name = topic;
    t.partitions.push_back({partition, offset, 3, "txn-md"});
    return coord_->CommitTxnOffsets(req);
  }
  int16_t TxnCommitError(const std::string& group, int64_t producer_id, int32_t generation,
                         const std::string& member) {
    return TxnCommit(group, producer_id, "t", 0, 1, generation, member)
        .topics.at(0)
        .partitions.at(0)
        .error_code;
  }
  // The fetch a read_committed consumer makes: (offset, error).
  std::pair<int64_t, int16_t> StableFetch(const std::string& group, const std::string& topic,
                                          int32_t partition) {
    std::vector<protocol::OffsetFetchRequest::Topic> topics{{topic, {partition}}};
    auto g = coord_->FetchOffsets(group, topics, /*require_stable=*/true);
    const auto& p = g.topics.at(0).partitions.at(0);
    return {p.committed_offset, p.error_code};
  }
  // Appends the producer's COMMIT or ABORT marker to the group's partition,
  // as the WriteTxnMarkers handler does.
  void WriteMarker(const std::string& group, int64_t producer_id, bool commit) {
    const int32_t p = PartitionForKey(group, kPartitions);
    const protocol::TxnMarker marker{
        commit ? protocol::ControlType::kCommit : protocol::ControlType::kAbort, 0};
    Bytes batch = protocol::BuildTxnMarkerBatch(producer_id, 0, marker, clock_.NowMs());
    std::vector<storage::BatchInfo> infos{{.size = static_cast<int32_t>(batch.size()),
                                           .record_count = 1,
                                           .max_timestamp = clock_.NowMs(),
                                           .producer_id = producer_id,
                                           .producer_epoch = 0,
                                           .transactional = true}};
    ASSERT_TRUE(logs_[p]
                    ->Append(MutableByteView(batch), infos, LeaderEpoch(0),
                             storage::AppendOrigin::kCoordinator)
                    .ok());
    coord_->CompleteTransaction(p, producer_id, commit);
  }
};

TEST_F(TxnOffsetsTest, OffsetsWaitForTheCommitMarker) {
  ASSERT_EQ(Commit("g", -1, "", "t", {{0, 5}}).topics[0].partitions[0].error_code, 0);
  ASSERT_EQ(TxnCommit("g", 42, "t", 0, 10).topics[0].partitions[0].error_code, 0);
  EXPECT_EQ(Committed("g", "t", 0), 5);  // read_uncommitted fetch: the committed one
  EXPECT_EQ(StableFetch("g", "t", 0),
            std::make_pair(int64_t{-1}, Code(ErrorCode::kUnstableOffsetCommit)));
  WriteMarker("g", 42, /*commit=*/true);
  EXPECT_EQ(Committed("g", "t", 0), 10);
  EXPECT_EQ(StableFetch("g", "t", 0), std::make_pair(int64_t{10}, int16_t{0}));
}

TEST_F(TxnOffsetsTest, AnAbortDropsTheOffsets) {
  ASSERT_EQ(Commit("g", -1, "", "t", {{0, 5}}).topics[0].partitions[0].error_code, 0);
  ASSERT_EQ(TxnCommit("g", 42, "t", 0, 10).topics[0].partitions[0].error_code, 0);
  WriteMarker("g", 42, /*commit=*/false);
  EXPECT_EQ(StableFetch("g", "t", 0), std::make_pair(int64_t{5}, int16_t{0}));
  // A marker of another producer ends nothing of this one's.
  ASSERT_EQ(TxnCommit("g", 43, "t", 0, 20).topics[0].partitions[0].error_code, 0);
  WriteMarker("g", 44, /*commit=*/true);
  EXPECT_EQ(StableFetch("g", "t", 0).second, Code(ErrorCode::kUnstableOffsetCommit));
}

TEST_F(TxnOffsetsTest, RestartReplaysPendingCommittedAndAbortedOffsets) {
  ASSERT_EQ(TxnCommit("g", 42, "t", 0, 10).topics[0].partitions[0].error_code, 0);
  ASSERT_EQ(TxnCommit("g", 43, "t", 1, 20).topics[0].partitions[0].error_code, 0);
  ASSERT_EQ(TxnCommit("g", 44, "t", 2, 30).topics[0].partitions[0].error_code, 0);
  WriteMarker("g", 42, true);
  WriteMarker("g", 43, false);
  Restart();
  EXPECT_EQ(StableFetch("g", "t", 0), std::make_pair(int64_t{10}, int16_t{0}));
  EXPECT_EQ(StableFetch("g", "t", 1), std::make_pair(int64_t{-1}, int16_t{0}));
  EXPECT_EQ(StableFetch("g", "t", 2).second, Code(ErrorCode::kUnstableOffsetCommit));
  WriteMarker("g", 44, true);  // the transaction ends after the restart
  EXPECT_EQ(StableFetch("g", "t", 2), std::make_pair(int64_t{30}, int16_t{0}));
}

// A plain commit written after the transaction's offsets stays when the
// transaction commits later (Kafka keeps the later record), live and replayed.
TEST_F(TxnOffsetsTest, APlainCommitAfterTheTransactionsOffsetsWins) {
  ASSERT_EQ(TxnCommit("g", 42, "t", 0, 10).topics[0].partitions[0].error_code, 0);
  ASSERT_EQ(TxnCommit("g", 42, "t", 1, 11).topics[0].partitions[0].error_code, 0);
  ASSERT_EQ(Commit("g", -1, "", "t", {{0, 7}}).topics[0].partitions[0].error_code, 0);
  WriteMarker("g", 42, /*commit=*/true);
  EXPECT_EQ(StableFetch("g", "t", 0), std::make_pair(int64_t{7}, int16_t{0}));
  EXPECT_EQ(StableFetch("g", "t", 1), std::make_pair(int64_t{11}, int16_t{0}));
  Restart();
  EXPECT_EQ(StableFetch("g", "t", 0), std::make_pair(int64_t{7}, int16_t{0}));
  EXPECT_EQ(StableFetch("g", "t", 1), std::make_pair(int64_t{11}, int16_t{0}));
  // And a transaction's offsets written after a plain commit replace it.
  ASSERT_EQ(TxnCommit("g", 43, "t", 0, 20).topics[0].partitions[0].error_code, 0);
  WriteMarker("g", 43, /*commit=*/true);
  EXPECT_EQ(StableFetch("g", "t", 0), std::make_pair(int64_t{20}, int16_t{0}));
}

TEST_F(TxnOffsetsTest, AConsumersGroupMetadataIsChecked) {
  testing::StableInfo stable = StableGroup("g", 2);
  const std::string& member = stable.members[0];
  EXPECT_EQ(TxnCommitError("g", 42, stable.generation, member), 0);
  EXPECT_EQ(TxnCommitError("g", 42, stable.generation + 1, member),
            Code(ErrorCode::kIllegalGeneration));
  EXPECT_EQ(TxnCommitError("g", 42, stable.generation, "not-a-member"),
            Code(ErrorCode::kUnknownMemberId));
  // Without the consumer's group metadata (generation -1, no member) the
  // commit is taken, as Kafka takes it.
  EXPECT_EQ(TxnCommitError("g", 42, -1, ""), 0);
  // A group that does not exist yet takes only such commits.
  EXPECT_EQ(TxnCommitError("new", 42, 3, "m"), Code(ErrorCode::kIllegalGeneration));
  EXPECT_EQ(TxnCommitError("new", 42, -1, ""), 0);
}

}  // namespace
}  // namespace strata::coordinator

namespace strata::coordinator {
namespace {

// A transaction's end that reaches the group's partition while it loads
// (its marker past the end the replay reads to) is applied once the groups
// are in, not lost.
TEST_F(TxnOffsetsTest, AnEndArrivingWhileThePartitionLoadsIsApplied) {
  ASSERT_EQ(TxnCommit("g", 42, "t", 0, 10).topics[0].partitions[0].error_code, 0);
  const int32_t p = PartitionForKey("g", kPartitions);
  coord_->UnloadPartition(p);
  bool ended = false;
  on_log_lookup_ = [&](int32_t q) {
    if (q != p || ended) return;
    ended = true;
    coord_->CompleteTransaction(p, 42, /*committed=*/true);
  };
  ASSERT_TRUE(coord_->LoadPartition(p).ok());
  on_log_lookup_ = nullptr;
  ASSERT_TRUE(ended);
  EXPECT_EQ(StableFetch("g", "t", 0), std::make_pair(int64_t{10}, int16_t{0}));
}

}  // namespace
}  // namespace strata::coordinator
