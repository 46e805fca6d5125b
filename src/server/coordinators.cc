// The broker's coordinators: consumer groups on __consumer_offsets and
// transactions on __transaction_state. Each coordinator keeps its state in
// its topic and serves the keys of the partitions this broker leads.
#include <fmt/format.h>

#include <algorithm>

#include "coordinator/txn_log.h"
#include "kafka/coordinator_topic.h"
#include "kafka/txn_routing.h"
#include "server/broker.h"
#include "server/logger.h"

namespace strata::server {

namespace {

std::vector<std::string> SplitList(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    std::string item = value.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

// KIP-848's settings, checked against their bounds as Kafka checks them at
// start-up.
Result<coordinator::ConsumerGroupConfig> ConsumerGroupSettings(const config::BrokerConfig& c) {
  coordinator::ConsumerGroupConfig out;
  auto get = [&](const char* key) { return static_cast<int32_t>(c.GetLong(key)); };
  const auto protocols = SplitList(c.Get("group.coordinator.rebalance.protocols"));
  out.enabled = std::find(protocols.begin(), protocols.end(), "consumer") != protocols.end();
  out.session_timeout_ms = get("group.consumer.session.timeout.ms");
  out.heartbeat_interval_ms = get("group.consumer.heartbeat.interval.ms");
  out.max_size = get("group.consumer.max.size");
  out.assignors = SplitList(c.Get("group.consumer.assignors"));
  if (out.session_timeout_ms < get("group.consumer.min.session.timeout.ms") ||
      out.session_timeout_ms > get("group.consumer.max.session.timeout.ms")) {
    return MakeError(Errc::kInvalidArgument,
                     "group.consumer.session.timeout.ms must be within "
                     "group.consumer.min.session.timeout.ms and "
                     "group.consumer.max.session.timeout.ms");
  }
  if (out.heartbeat_interval_ms < get("group.consumer.min.heartbeat.interval.ms") ||
      out.heartbeat_interval_ms > get("group.consumer.max.heartbeat.interval.ms")) {
    return MakeError(Errc::kInvalidArgument,
                     "group.consumer.heartbeat.interval.ms must be within "
                     "group.consumer.min.heartbeat.interval.ms and "
                     "group.consumer.max.heartbeat.interval.ms");
  }
  if (out.heartbeat_interval_ms >= out.session_timeout_ms) {
    return MakeError(Errc::kInvalidArgument,
                     "group.consumer.heartbeat.interval.ms must be less than "
                     "group.consumer.session.timeout.ms");
  }
  if (out.assignors.empty()) {
    return MakeError(Errc::kInvalidArgument, "group.consumer.assignors is empty");
  }
  return out;
}

}  // namespace

std::unique_ptr<coordinator::CoordinatorLog> Broker::MakeCoordinatorLog(
    const std::string& topic, const char* partitions_key) {
  auto partitions = static_cast<int32_t>(config_.GetLong(partitions_key));
  // The topic itself is made at the first FindCoordinator.
  if (auto existing = topics_->GetTopic(topic)) {
    partitions = existing->partitions;  // as Kafka: the topic's count wins over the config
  }
  return kafka::MakeCoordinatorLog(*topics_, topic, partitions, clock_);
}

Status Broker::StartGroupCoordinator() {
  coordinator::CoordinatorConfig cc;
  cc.initial_rebalance_delay_ms =
      static_cast<int32_t>(config_.GetLong("group.initial.rebalance.delay.ms"));
  cc.max_group_size = static_cast<int32_t>(config_.GetLong("group.max.size"));
  cc.min_session_timeout_ms = static_cast<int32_t>(config_.GetLong("group.min.session.timeout.ms"));
  cc.max_session_timeout_ms = static_cast<int32_t>(config_.GetLong("group.max.session.timeout.ms"));
  cc.offsets_retention_ms = config_.GetLong("offsets.retention.minutes") * 60000;
  cc.retention_check_interval_ms = config_.GetLong("offsets.retention.check.interval.ms");
  auto consumer = ConsumerGroupSettings(config_);
  if (!consumer.ok()) return consumer.take_error();
  cc.consumer = std::move(*consumer);
  group_coordinator_ = std::make_unique<coordinator::GroupCoordinator>(
      cc, MakeCoordinatorLog(coordinator::kOffsetsTopic, "offsets.topic.num.partitions"), clock_);
  broker::TopicManager* topics = topics_.get();
  group_coordinator_->SetTopicCatalog(
      {[topics](
           const std::string& name) -> std::optional<std::pair<coordinator::TopicId, int32_t>> {
         auto info = topics->GetTopicInfo(name);
         if (!info) return std::nullopt;
         return std::make_pair(info->record.id, info->record.partitions);
       },
       [topics](const coordinator::TopicId& id) -> std::optional<std::string> {
         for (const auto& t : topics->ListTopics()) {
           if (t.id == id) return t.name;
         }
         return std::nullopt;
       },
       [topics] {
         std::vector<std::string> names;
         for (const auto& t : topics->ListTopics()) {
           if (!t.internal) names.push_back(t.name);
         }
         return names;
       }});
  context_->group_coordinator = group_coordinator_.get();
  return Status::Ok();
}

Status Broker::StartTxnCoordinator() {
  coordinator::TxnCoordinatorConfig tc;
  tc.max_timeout_ms = static_cast<int32_t>(config_.GetLong("transaction.max.timeout.ms"));
  // The coordinator's own aborts (timeouts, fencing) follow the cluster's level.
  tc.transaction_version = static_cast<int16_t>(config_.GetLong("strata.transaction.version"));
  kafka::ProducerIdAllocator* ids = producer_ids_.get();
  txn_coordinator_ = std::make_unique<coordinator::TxnCoordinator>(
      tc,
      MakeCoordinatorLog(coordinator::kTransactionStateTopic,
                         "transaction.state.log.num.partitions"),
      [ids] { return ids->Next(); }, clock_);
  txn_markers_ = std::make_unique<kafka::TxnMarkerChannel>(*context_, *txn_coordinator_,
                                                           metadata_->view(), io_.get_executor());
  txn_verifier_ = std::make_unique<kafka::TxnPartitionVerifier>(*context_, io_.get_executor());
  context_->txn_coordinator = txn_coordinator_.get();
  context_->txn_markers = txn_markers_.get();
  context_->txn_verifier = txn_verifier_.get();
  return Status::Ok();
}

void Broker::ListenForCoordinatorLeadership() {
  // Loaded as this broker gains a partition's leadership (now, for those it
  // leads already), unloaded as it loses it. The transaction coordinator's
  // epoch is the partition's leader epoch, which every marker it writes
  // carries; the transactions it finds half-ended get their markers again.
  coordinator::GroupCoordinator* groups = group_coordinator_.get();
  coordinator::TxnCoordinator* txns = txn_coordinator_.get();
  kafka::TxnMarkerChannel* markers = txn_markers_.get();
  broker::TopicManager* topics = topics_.get();
  topics_->SetLeadershipListener([=](const TopicPartition& tp, bool leader) {
    if (tp.topic == coordinator::kOffsetsTopic) {
      if (!leader) {
        groups->UnloadPartition(tp.partition);
        return;
      }
      Status st = groups->LoadPartition(tp.partition);
      if (!st.ok()) Log()->error("loading the groups of {}: {}", tp.ToString(), st.error().message);
    } else if (tp.topic == coordinator::kTransactionStateTopic) {
      auto partition = topics->GetPartition(tp);
      if (!leader || !partition) {
        txns->UnloadPartition(tp.partition);
        return;
      }
      auto ending = txns->LoadPartition(tp.partition, partition->leader_epoch().value());
      if (!ending.ok()) {
        Log()->error("loading the transactions of {}: {}", tp.ToString(), ending.error().message);
        return;
      }
      for (const std::string& id : *ending) markers->Complete(id);
    }
  });
}

asio::awaitable<void> Broker::GroupCoordinatorTicks() {
  // Group timers (sessions, rebalance timeouts, initial delay) are applied
  // here; 50 ms is well below any timeout clients use.
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(std::chrono::milliseconds(50));
    co_await timer.async_wait(asio::use_awaitable);
    group_coordinator_->Tick();
  }
}

namespace {

// Sees a coordinator-initiated abort through (its markers follow).
asio::awaitable<void> SettleAbort(kafka::BrokerContext& ctx, coordinator::TxnReply abort) {
  const protocol::ErrorCode settled = co_await kafka::SettleTxnReply(ctx, abort);
  if (settled != protocol::ErrorCode::kNone) {
    Log()->warn("{}: aborting its timed-out transaction failed ({}); tried again later",
                abort.write->transactional_id,
                protocol::ErrorCodeName(static_cast<int16_t>(settled)));
  }
}

// Sees an expired id's tombstone through (the id then leaves the coordinator).
asio::awaitable<void> SettleExpiry(kafka::BrokerContext& ctx, coordinator::TxnReply tombstone) {
  const protocol::ErrorCode settled = co_await kafka::SettleTxnReply(ctx, tombstone);
  if (settled != protocol::ErrorCode::kNone) {
    Log()->warn("{}: expiring it failed ({}); tried again later", tombstone.write->transactional_id,
                protocol::ErrorCodeName(static_cast<int16_t>(settled)));
  }
}

}  // namespace

asio::awaitable<void> Broker::AbortTimedOutTransactions() {
  const auto interval = std::chrono::milliseconds(
      config_.GetLong("transaction.abort.timed.out.transaction.cleanup.interval.ms"));
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(interval);
    co_await timer.async_wait(asio::use_awaitable);
    for (coordinator::TxnReply& abort : txn_coordinator_->AbortTimedOut()) {
      asio::co_spawn(io_, SettleAbort(*context_, std::move(abort)), asio::detached);
    }
  }
}

asio::awaitable<void> Broker::ExpireTransactionalIds() {
  const auto interval = std::chrono::milliseconds(
      config_.GetLong("transaction.remove.expired.transaction.cleanup.interval.ms"));
  const int64_t expiration_ms = config_.GetLong("transactional.id.expiration.ms");
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(interval);
    co_await timer.async_wait(asio::use_awaitable);
    for (coordinator::TxnReply& tombstone : txn_coordinator_->ExpireIds(expiration_ms)) {
      asio::co_spawn(io_, SettleExpiry(*context_, std::move(tombstone)), asio::detached);
    }
  }
}

}  // namespace strata::server
