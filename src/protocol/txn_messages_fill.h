#pragma once
// For tests: fills every field of the transaction APIs' messages that exists
// in a version (protocol/messages/), for round trips here and in the request
// registry's hostile-input tests.
#include <optional>
#include <string>

#include "protocol/messages/add_offsets_to_txn.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "protocol/messages/describe_producers.h"
#include "protocol/messages/describe_transactions.h"
#include "protocol/messages/end_txn.h"
#include "protocol/messages/list_transactions.h"
#include "protocol/messages/txn_offset_commit.h"
#include "protocol/messages/write_txn_markers.h"

namespace strata::protocol {

inline std::optional<std::string> TxnFillOpt(bool make_null, std::string s) {
  if (make_null) return std::nullopt;
  return s;
}

// ---------------------------------------------------- per-message fillers
// Each sets every field that exists in version v to a non-default value and
// leaves the others at their defaults, so decoded == filled. `nulls` turns
// nullable fields into nulls. Fields are assigned (never appended), so
// applying Fill for every version in turn sets the union of all versions'
// fields (see FillEveryVersion).

inline void Fill(AddPartitionsToTxnRequest& m, int16_t v, bool) {
  using R = AddPartitionsToTxnRequest;
  if (v >= 4) {
    m.transactions = {R::Transaction{"txn-a", 4000, 3, false, {{"orders", {0, 1}}, {"events", {}}}},
                      R::Transaction{"txn-b", 4001, 7, true, {{"orders", {2}}}}};
  } else {
    m.v3_and_below_transactional_id = "txn-a";
    m.v3_and_below_producer_id = 4000;
    m.v3_and_below_producer_epoch = 3;
    m.v3_and_below_topics = {{"orders", {0, 1}}, {"events", {5}}};
  }
}
inline void Fill(AddPartitionsToTxnResponse& m, int16_t v, bool) {
  using R = AddPartitionsToTxnResponse;
  m.throttle_time_ms = 21;
  const std::vector<R::TopicResult> topics = {{"orders", {{0, 0}, {1, 55}}}, {"events", {{5, 3}}}};
  if (v >= 4) {
    m.error_code = 120;
    m.results_by_transaction = {{"txn-a", topics}, {"txn-b", {}}};
  } else {
    m.results_by_topic_v3_and_below = topics;
  }
}

inline void Fill(AddOffsetsToTxnRequest& m, int16_t, bool) {
  m.transactional_id = "txn-a";
  m.producer_id = 4000;
  m.producer_epoch = 3;
  m.group_id = "grp";
}
inline void Fill(AddOffsetsToTxnResponse& m, int16_t, bool) {
  m.throttle_time_ms = 8;
  m.error_code = 51;
}

inline void Fill(EndTxnRequest& m, int16_t, bool) {
  m.transactional_id = "txn-a";
  m.producer_id = 4000;
  m.producer_epoch = 3;
  m.committed = true;
}
inline void Fill(EndTxnResponse& m, int16_t v, bool) {
  m.throttle_time_ms = 9;
  m.error_code = 48;
  if (v >= 5) {
    m.producer_id = 4000;
    m.producer_epoch = 4;
  }
}

inline void Fill(WriteTxnMarkersRequest& m, int16_t, bool) {
  m.markers = {{4000, 3, true, {{"orders", {0, 1}}, {"__consumer_offsets", {12}}}, 17},
               {4001, 0, false, {{"events", {}}}, 18}};
}
inline void Fill(WriteTxnMarkersResponse& m, int16_t, bool) {
  m.markers = {{4000, {{"orders", {{0, 0}, {1, 6}}}, {"__consumer_offsets", {{12, 0}}}}},
               {4001, {}}};
}

inline void Fill(TxnOffsetCommitRequest& m, int16_t v, bool nulls) {
  using R = TxnOffsetCommitRequest;
  m.transactional_id = "txn-a";
  m.group_id = "grp";
  m.producer_id = 4000;
  m.producer_epoch = 3;
  if (v >= 3) {
    m.generation_id = 12;
    m.member_id = "member-1";
    m.group_instance_id = TxnFillOpt(nulls, "instance-1");
  }
  R::Partition p0{.partition_index = 0, .committed_offset = 100};
  R::Partition p1{.partition_index = 3, .committed_offset = 250};
  if (v >= 2) {
    p0.committed_leader_epoch = 5;
    p1.committed_leader_epoch = 6;
  }
  p0.committed_metadata = TxnFillOpt(nulls, "meta");
  p1.committed_metadata = "";
  m.topics = {{"orders", {p0, p1}}, {"events", {}}};
}
inline void Fill(TxnOffsetCommitResponse& m, int16_t, bool) {
  m.throttle_time_ms = 4;
  m.topics = {{"orders", {{0, 0}, {3, 22}}}, {"events", {}}};
}

inline void Fill(DescribeProducersRequest& m, int16_t, bool) {
  m.topics = {{"orders", {0, 1}}, {"events", {}}};
}
inline void Fill(DescribeProducersResponse& m, int16_t, bool nulls) {
  using R = DescribeProducersResponse;
  m.throttle_time_ms = 2;
  R::Partition p0{
      .partition_index = 0,
      .error_code = 0,
      .error_message = std::nullopt,
      .active_producers = {{4000, 70000, 41, 1700000000000, 17, 1234}, {4001, 2, -1, -1, -1, -1}}};
  R::Partition p1{.partition_index = 1,
                  .error_code = 6,
                  .error_message = TxnFillOpt(nulls, "not the leader"),
                  .active_producers = {}};
  m.topics = {{"orders", {p0, p1}}, {"events", {}}};
}

inline void Fill(DescribeTransactionsRequest& m, int16_t, bool) {
  m.transactional_ids = {"txn-a", "b"};
}
inline void Fill(DescribeTransactionsResponse& m, int16_t, bool) {
  m.throttle_time_ms = 3;
  m.transaction_states = {
      {0, "txn-a", "Ongoing", 60000, 1700000000000, 4000, 3, {{"orders", {0, 1}}, {"ev", {}}}},
      {105, "b", "Dead", 0, -1, -1, -1, {}}};
}

inline void Fill(ListTransactionsRequest& m, int16_t v, bool nulls) {
  m.state_filters = {"Ongoing", "PrepareCommit"};
  m.producer_id_filters = {4000, 1LL << 40};
  if (v >= 1) m.duration_filter = 30000;
  if (v >= 2) m.transactional_id_pattern = TxnFillOpt(nulls, "txn-.*");
}
inline void Fill(ListTransactionsResponse& m, int16_t, bool) {
  m.throttle_time_ms = 1;
  m.error_code = 14;
  m.unknown_state_filters = {"Bogus"};
  m.transaction_states = {{"txn-a", 4000, "Ongoing"}, {"txn-b", 4001, "CompleteAbort"}};
}

}  // namespace strata::protocol
