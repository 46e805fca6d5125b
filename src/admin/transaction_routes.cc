// The transaction coordinator's admin API and metrics. GET /v1/transactions
// lists every transactional id this broker coordinates (the ids of the
// __transaction_state partitions it leads) with its state, producer id and
// epoch, timeout, the start of its transaction and the partitions in it;
// 503 while one of those partitions is still loading. The gauges show the
// transactions open here, how old the oldest is and the markers being
// written; the counters the transactions ended here.
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "admin/routes.h"
#include "base/metrics.h"
#include "coordinator/txn_coordinator.h"
#include "kafka/txn_marker_channel.h"

namespace strata::admin {

namespace {

using nlohmann::json;

json TransactionJson(const std::string& id, const coordinator::TxnTransit& txn) {
  json partitions = json::array();
  for (const TopicPartition& tp : txn.partitions) {
    partitions.push_back({{"topic", tp.topic}, {"partition", tp.partition}});
  }
  return {{"transactional_id", id},
          {"state", coordinator::TxnStatusName(txn.state)},
          {"producer_id", txn.producer_id},
          {"producer_epoch", txn.producer_epoch},
          {"timeout_ms", txn.timeout_ms},
          {"start_ms", txn.start_ms},
          {"last_update_ms", txn.last_update_ms},
          {"partitions", std::move(partitions)}};
}

HttpResponse TransactionsResponse(kafka::BrokerContext& ctx) {
  json out = json::array();
  coordinator::TxnCoordinator* tc = ctx.txn_coordinator;
  if (tc == nullptr) return {200, "application/json", out.dump(2) + "\n"};
  const coordinator::TxnList listed = tc->List({});
  if (listed.error != protocol::ErrorCode::kNone) {
    const json error{{"error", "a partition of __transaction_state is loading; try again"}};
    return {503, "application/json", error.dump(2) + "\n"};
  }
  for (const coordinator::TxnListing& t : listed.transactions) {
    // Gone since it was listed (expired, or its partition moved): left out.
    if (auto txn = tc->Describe(t.transactional_id)) {
      out.push_back(TransactionJson(t.transactional_id, *txn));
    }
  }
  return {200, "application/json", out.dump(2) + "\n"};
}

// The coordinator's TxnStats, taken once per scrape (a walk over its ids)
// rather than once per metric: kept for a second. Thread-safe.
class TxnStatsSnapshot {
 public:
  coordinator::TxnStats Get(const kafka::BrokerContext& ctx) {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (taken_ && now - *taken_ < std::chrono::seconds(1)) return stats_;
    // A broker without a coordinator (yet) shows zeros.
    stats_ =
        ctx.txn_coordinator != nullptr ? ctx.txn_coordinator->Stats() : coordinator::TxnStats{};
    taken_ = now;
    return stats_;
  }

 private:
  std::mutex mu_;
  coordinator::TxnStats stats_;
  std::optional<std::chrono::steady_clock::time_point> taken_;
};

}  // namespace

void RegisterTransactionRoutes(HttpServer& server, AdminContext& admin) {
  kafka::BrokerContext& ctx = admin.broker;
  server.Route("/v1/transactions",
               [&ctx](const std::string&) { return TransactionsResponse(ctx); });
}

void RegisterTransactionGauges(kafka::BrokerContext& ctx) {
  auto& r = metrics::Global();
  auto snapshot = std::make_shared<TxnStatsSnapshot>();
  auto stats = [&ctx, snapshot] { return snapshot->Get(ctx); };
  r.SetGauge("strata_transactions_open",
             "Transactions this broker coordinates that are ongoing, or committing or aborting "
             "(their markers being written)",
             {}, [stats] { return static_cast<double>(stats().open); });
  r.SetGauge("strata_transaction_oldest_open_age_seconds",
             "How long the oldest transaction open here has been open (0 when none is)", {},
             [&ctx, stats] {
               const int64_t start = stats().oldest_open_start_ms;
               if (start < 0) return 0.0;
               return static_cast<double>(std::max<int64_t>(0, ctx.clock->NowMs() - start)) /
                      1000.0;
             });
  r.SetCounterFunc("strata_transactions_committed_total",
                   "Transactions this broker's coordinator committed (their end took effect)", {},
                   [stats] { return static_cast<double>(stats().committed); });
  r.SetCounterFunc("strata_transactions_aborted_total",
                   "Transactions this broker's coordinator aborted, timed-out and fenced ones "
                   "included (their end took effect)",
                   {}, [stats] { return static_cast<double>(stats().aborted); });
  r.SetGauge("strata_transaction_markers_in_flight",
             "Transactions whose COMMIT/ABORT markers this broker is writing now", {}, [&ctx] {
               return ctx.txn_markers != nullptr ? static_cast<double>(ctx.txn_markers->in_flight())
                                                 : 0.0;
             });
  r.SetCounterFunc(
      "strata_transaction_marker_requests_total",
      "WriteTxnMarkers requests this broker's coordinator sent to partition leaders", {}, [&ctx] {
        return ctx.txn_markers != nullptr ? static_cast<double>(ctx.txn_markers->requests_sent())
                                          : 0.0;
      });
  r.SetCounterFunc("strata_transaction_marker_sends_total",
                   "Transactions' markers sent to a partition leader (one per transaction and "
                   "leader per round; several share a request when a leader is busy)",
                   {}, [&ctx] {
                     return ctx.txn_markers != nullptr
                                ? static_cast<double>(ctx.txn_markers->markers_sent())
                                : 0.0;
                   });
}

}  // namespace strata::admin
