// `strata txn list`: every transactional id of the cluster, as
// kafka-transactions list and describe together show it. ListTransactions
// goes to every broker (each lists the ids it coordinates), then
// DescribeTransactions to each coordinator for its ids: state, producer id
// and epoch, timeout, how long the open transaction has run and its
// partitions. An id that expired between the two is left out; one whose
// coordinator moved is shown with what the list said.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/cli.h"
#include "protocol/error_code.h"
#include "protocol/messages/describe_transactions.h"
#include "protocol/messages/list_transactions.h"

namespace strata::app {

namespace {

using nlohmann::json;

// v0 of both: what every Kafka 3.x/4.x broker serves.
constexpr int16_t kListTransactionsVersion = 0;
constexpr int16_t kDescribeTransactionsVersion = 0;

struct TxnFlags {
  std::vector<std::string> states;  // empty: every state
};

// One id as its coordinator listed and (when it could) described it.
struct TxnRow {
  int32_t coordinator = -1;
  int64_t producer_id = -1;
  std::string state;
  std::optional<protocol::DescribeTransactionsResponse::TransactionState> described;
};

// Every broker's ids (ListTransactions); an error message, or "".
std::string ListAll(KafkaAdmin& admin, const TxnFlags& t, std::map<std::string, TxnRow>& rows,
                    int* code) {
  for (int32_t node : admin.Brokers()) {
    protocol::ListTransactionsRequest req;
    req.state_filters = t.states;
    auto r = admin.Call<protocol::ListTransactionsRequest, protocol::ListTransactionsResponse>(
        req, kListTransactionsVersion, node);
    if (!r.ok()) {
      *code = kExitUnreachable;
      return "broker " + std::to_string(node) + ": " + r.error().message;
    }
    if (r->error_code != 0) {
      *code = kExitRefused;
      return "broker " + std::to_string(node) + ": " + DescribeError(r->error_code, {});
    }
    if (!r->unknown_state_filters.empty()) {
      *code = kExitUnreachable;  // a bad argument
      return "unknown state " + r->unknown_state_filters.front();
    }
    for (const auto& s : r->transaction_states) {
      rows[s.transactional_id] = {node, s.producer_id, s.transaction_state, std::nullopt};
    }
  }
  return "";
}

// Each coordinator describes its ids; ids that expired meanwhile leave `rows`.
std::string DescribeAll(KafkaAdmin& admin, std::map<std::string, TxnRow>& rows) {
  std::map<int32_t, protocol::DescribeTransactionsRequest> by_node;
  for (const auto& [id, row] : rows) by_node[row.coordinator].transactional_ids.push_back(id);
  for (auto& [node, req] : by_node) {
    auto r =
        admin.Call<protocol::DescribeTransactionsRequest, protocol::DescribeTransactionsResponse>(
            req, kDescribeTransactionsVersion, node);
    if (!r.ok()) return "broker " + std::to_string(node) + ": " + r.error().message;
    for (auto& d : r->transaction_states) {
      auto row = rows.find(d.transactional_id);
      if (row == rows.end()) continue;
      if (d.error_code == protocol::Code(protocol::ErrorCode::kTransactionalIdNotFound)) {
        rows.erase(row);
      } else if (d.error_code == 0) {
        row->second.state = d.transaction_state;
        row->second.described = std::move(d);
      }
    }
  }
  return "";
}

json RowJson(const std::string& id, const TxnRow& row, int64_t now_ms) {
  json out{{"transactional_id", id},     {"coordinator", row.coordinator},
           {"state", row.state},         {"producer_id", row.producer_id},
           {"producer_epoch", nullptr},  {"timeout_ms", nullptr},
           {"start_ms", nullptr},        {"duration_ms", nullptr},
           {"partitions", json::array()}};
  if (const auto& d = row.described) {
    out["producer_id"] = d->producer_id;
    out["producer_epoch"] = d->producer_epoch;
    out["timeout_ms"] = d->transaction_timeout_ms;
    out["start_ms"] = d->transaction_start_time_ms;
    if (d->transaction_start_time_ms >= 0) {
      out["duration_ms"] = std::max<int64_t>(0, now_ms - d->transaction_start_time_ms);
    }
    for (const auto& t : d->topics) {
      for (int32_t p : t.partitions)
        out["partitions"].push_back({{"topic", t.topic}, {"partition", p}});
    }
  }
  return out;
}

std::vector<std::string> RowCells(const json& r) {
  auto cell = [](const json& v) { return v.is_null() ? std::string("-") : v.dump(); };
  std::string partitions;
  for (const auto& p : r.at("partitions")) {
    partitions += (partitions.empty() ? "" : ",") + p.at("topic").get<std::string>() + "-" +
                  std::to_string(p.at("partition").get<int32_t>());
  }
  return {r.at("transactional_id").get<std::string>(),
          cell(r.at("coordinator")),
          r.at("state").get<std::string>(),
          cell(r.at("producer_id")),
          cell(r.at("producer_epoch")),
          cell(r.at("timeout_ms")),
          cell(r.at("duration_ms")),
          partitions.empty() ? "-" : partitions};
}

int List(KafkaAdmin& admin, const CommonFlags& f, const TxnFlags& t) {
  std::map<std::string, TxnRow> rows;  // by transactional id
  int code = kExitOk;
  if (std::string error = ListAll(admin, t, rows, &code); !error.empty()) {
    return Fail("txn list: " + error, code);
  }
  if (std::string error = DescribeAll(admin, rows); !error.empty()) {
    return Fail("txn list: " + error, kExitUnreachable);
  }
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  json out = json::array();
  Table table({"TRANSACTIONAL-ID", "COORDINATOR", "STATE", "PRODUCER-ID", "EPOCH", "TIMEOUT-MS",
               "DURATION-MS", "PARTITIONS"});
  for (const auto& [id, row] : rows) {
    out.push_back(RowJson(id, row, now_ms));
    table.Add(RowCells(out.back()));
  }
  if (f.json()) {
    std::cout << out.dump(2) << "\n";
  } else {
    table.Print(std::cout);
  }
  return kExitOk;
}

}  // namespace

void AddTxnCommands(CLI::App& root, const std::shared_ptr<CommonFlags>& flags, Commands& out) {
  auto t = std::make_shared<TxnFlags>();
  auto* txn = root.add_subcommand("txn", "transactions: list with their state and partitions");
  txn->alias("transactions");
  txn->require_subcommand(1);
  CLI::App* list = txn->add_subcommand(
      "list", "every transactional id, its state, producer, open time and partitions");
  AddCommonOptions(list, *flags, true, false);
  list->add_option("--state", t->states,
                   "only these states (Empty, Ongoing, PrepareCommit, PrepareAbort, "
                   "CompleteCommit, CompleteAbort, PrepareEpochFence); repeatable");
  out.push_back({list, [flags, t] {
                   int code = kExitOk;
                   auto admin = ConnectOrFail(*flags, &code);
                   return admin ? List(*admin, *flags, *t) : code;
                 }});
}

}  // namespace strata::app
