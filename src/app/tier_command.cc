// `strata tier status`: each tiered partition's local and remote offsets,
// from the admin API of its leader (a broker's /v1/topics shows the
// replicas it holds; the leader's is the one whose uploads count).
// `strata tier stores`: each broker's remote store, its breaker, throughput
// and errors (/v1/remote).
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "app/cli.h"

namespace strata::app {

namespace {

using nlohmann::json;

struct TierFlags {
  std::vector<std::string> topics;  // empty: every tiered topic
  std::vector<std::string> admins;  // admin listeners; default: CommonFlags::admin
};

bool Tiered(const json& topic) {
  const json configs = topic.value("configs", json::object());
  return configs.value("remote.storage.enable", "false") == "true";
}

int Status(const CommonFlags& f, const TierFlags& t) {
  std::vector<std::string> admins = t.admins;
  if (admins.empty()) admins.push_back(f.admin);
  std::map<std::pair<std::string, int>, json> rows;  // the leader's view of each partition
  int answered = 0;
  for (const auto& admin : admins) {
    const HttpAnswer c = AdminHttp("GET", admin, "/v1/cluster");
    const HttpAnswer a = AdminHttp("GET", admin, "/v1/topics");
    if (c.status != 200 || a.status != 200) {
      Fail("tier status: admin API at " + admin + " did not answer: " + a.body, 0);
      continue;
    }
    answered++;
    try {
      const int node = json::parse(c.body).value("node_id", -1);
      for (const auto& topic : json::parse(a.body)) {
        const std::string name = topic.value("name", "");
        const bool wanted =
            t.topics.empty() ? Tiered(topic)
                             : std::find(t.topics.begin(), t.topics.end(), name) != t.topics.end();
        if (!wanted) continue;
        for (const auto& p : topic.value("partitions", json::array())) {
          auto key = std::make_pair(name, p.value("partition", -1));
          if (p.value("leader", -1) == node || rows.count(key) == 0) {
            json row = p;
            row["topic"] = name;
            row["tiered"] = Tiered(topic);
            row["reported_by"] = node;
            rows[key] = row;
          }
        }
      }
    } catch (const std::exception& e) {
      return Fail(std::string("tier status: unreadable answer from ") + admin + ": " + e.what(),
                  kExitUnreachable);
    }
  }
  if (answered == 0) return kExitUnreachable;
  json out = json::array();
  Table table({"TOPIC", "PARTITION", "LEADER", "LOCAL-START", "LOCAL-END", "REMOTE-START",
               "REMOTE-END", "NOT-UPLOADED", "LOCAL-BYTES"});
  for (auto& [key, row] : rows) {
    const int64_t end = row.value("log_end_offset", int64_t{0});
    const bool remote = row.contains("remote_log_end_offset");
    const int64_t remote_end = row.value("remote_log_end_offset", int64_t{-1});
    // Offsets not yet in remote storage (the active segment's included).
    row["offsets_not_uploaded"] = end - (remote_end + 1);
    out.push_back(row);
    auto num = [&](const char* k) {
      return row.contains(k) ? std::to_string(row[k].get<int64_t>()) : std::string("-");
    };
    table.Add({key.first, std::to_string(key.second), num("leader"), num("log_start_offset"),
               num("log_end_offset"), remote ? num("remote_log_start_offset") : "-",
               remote ? num("remote_log_end_offset") : "-", std::to_string(end - (remote_end + 1)),
               num("size_bytes")});
  }
  if (f.json()) {
    std::cout << out.dump(2) << "\n";
  } else {
    table.Print(std::cout);
  }
  return kExitOk;
}

std::string MiBps(const json& j) {
  return fmt::format("{:.1f}", j.value("bytes_per_second", 0.0) / (1 << 20));
}

std::string Count(const json& j, const char* key) {
  return std::to_string(j.value(key, uint64_t{0}));
}

int Stores(const CommonFlags& f, const TierFlags& t) {
  std::vector<std::string> admins = t.admins;
  if (admins.empty()) admins.push_back(f.admin);
  json out = json::array();
  Table table({"BROKER", "STORE", "BREAKER", "UP-MiB/s", "UPLOADS", "UP-FAILED", "READ-MiB/s",
               "READS", "READ-FAILED", "RETRIES", "HEDGES"});
  int failed = 0;
  for (const auto& admin : admins) {
    const HttpAnswer c = AdminHttp("GET", admin, "/v1/cluster");
    const HttpAnswer r = AdminHttp("GET", admin, "/v1/remote");
    if (c.status != 200 || r.status != 200) {
      Fail("tier stores: admin API at " + admin + " did not answer: " + r.body, 0);
      ++failed;
      continue;
    }
    try {
      json row = json::parse(r.body);
      row["node_id"] = json::parse(c.body).value("node_id", -1);
      out.push_back(row);
      const std::string node = std::to_string(row["node_id"].get<int>());
      if (!row.value("enabled", false)) {
        table.Add({node, "(tiered storage off)", "-", "-", "-", "-", "-", "-", "-", "-", "-"});
        continue;
      }
      const json up = row.value("upload", json::object());
      const json read = row.value("read", json::object());
      const json calls = row.value("calls", json::object());
      table.Add({node, row.value("uri", ""), row.value("breaker", ""), MiBps(up),
                 Count(up, "segments"), Count(up, "failures"), MiBps(read), Count(read, "reads"),
                 Count(read, "failures"), Count(calls, "retries"),
                 Count(calls, "hedges_won") + "/" + Count(calls, "hedges_fired")});
    } catch (const std::exception& e) {
      Fail(std::string("tier stores: unreadable answer from ") + admin + ": " + e.what(), 0);
      ++failed;
    }
  }
  if (f.json()) {
    std::cout << out.dump(2) << "\n";
  } else {
    table.Print(std::cout);
  }
  return failed == int(admins.size()) ? kExitUnreachable : kExitOk;
}

}  // namespace

void AddTierCommands(CLI::App& root, const std::shared_ptr<CommonFlags>& flags, Commands& out) {
  auto t = std::make_shared<TierFlags>();
  auto* tier = root.add_subcommand("tier", "tiered storage");
  tier->require_subcommand(1);
  auto* status = tier->add_subcommand(
      "status", "local and remote offsets of tiered partitions (from their leaders' admin APIs)");
  AddCommonOptions(status, *flags, false, false);
  status->add_option("topics", t->topics, "topics (default: every tiered topic)");
  status->add_option("--admin", t->admins, "admin listeners host:port (repeatable or a,b,c)")
      ->delimiter(',');
  out.push_back({status, [flags, t] { return Status(*flags, *t); }});
  auto* stores = tier->add_subcommand(
      "stores", "each broker's remote store: breaker, upload and read throughput, errors");
  AddCommonOptions(stores, *flags, false, false);
  stores->add_option("--admin", t->admins, "admin listeners host:port (repeatable or a,b,c)")
      ->delimiter(',');
  out.push_back({stores, [flags, t] { return Stores(*flags, *t); }});
}

}  // namespace strata::app
