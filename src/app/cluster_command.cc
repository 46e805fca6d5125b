// `strata cluster info|health`.
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "app/cli.h"

namespace strata::app {

namespace {

using nlohmann::json;

int Info(KafkaAdmin& admin, const CommonFlags& f) {
  auto md = admin.Metadata(std::vector<std::string>{});
  if (!md.ok()) return Fail("cluster info: " + md.error().message, kExitUnreachable);
  auto brokers = md->brokers;
  std::sort(brokers.begin(), brokers.end(),
            [](const auto& a, const auto& b) { return a.node_id < b.node_id; });
  json out{{"cluster_id", md->cluster_id.value_or("")},
           {"controller_id", md->controller_id},
           {"brokers", json::array()}};
  Table table({"ID", "HOST", "PORT", "RACK", "CONTROLLER"});
  for (const auto& b : brokers) {
    out["brokers"].push_back({{"id", b.node_id},
                              {"host", b.host},
                              {"port", b.port},
                              {"rack", b.rack ? json(*b.rack) : json(nullptr)}});
    table.Add({std::to_string(b.node_id), b.host, std::to_string(b.port), b.rack.value_or("-"),
               b.node_id == md->controller_id ? "yes" : ""});
  }
  if (f.json()) {
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "CLUSTER     " << md->cluster_id.value_or("") << "\nCONTROLLER  "
            << md->controller_id << "\n\n";
  table.Print(std::cout);
  return kExitOk;
}

// Healthy: a controller, every partition led, every ISR full, and (when
// the admin API answers) no registered broker offline.
int Health(KafkaAdmin& admin, const CommonFlags& f) {
  auto md = admin.Metadata();
  if (!md.ok()) return Fail("cluster health: " + md.error().message, kExitUnreachable);
  json offline = json::array();
  json under = json::array();
  for (const auto& t : md->topics) {
    for (const auto& p : t.partitions) {
      const std::string name = t.name.value_or("") + "-" + std::to_string(p.partition_index);
      if (p.leader_id < 0) offline.push_back(name);
      if (p.isr_nodes.size() < p.replica_nodes.size()) under.push_back(name);
    }
  }
  std::set<int32_t> live;
  for (const auto& b : md->brokers) live.insert(b.node_id);
  json down = json::array();
  const HttpAnswer cluster = AdminHttp("GET", f.admin, "/v1/cluster");
  bool admin_seen = false;
  if (cluster.status == 200) {
    try {
      const json body = json::parse(cluster.body);
      for (const auto& b : body.at("brokers")) {
        admin_seen = true;
        if (b.value("state", "") == "offline") down.push_back(b.at("node_id"));
      }
    } catch (const std::exception&) {
      admin_seen = false;
    }
  }
  const bool healthy = md->controller_id >= 0 && offline.empty() && under.empty() && down.empty();
  json out{{"healthy", healthy},
           {"controller_id", md->controller_id},
           {"brokers", live.size()},
           {"offline_brokers", down},
           {"offline_partitions", offline},
           {"under_replicated_partitions", under},
           {"admin_api", admin_seen}};
  if (f.json()) {
    std::cout << out.dump(2) << "\n";
  } else {
    auto list = [](const json& a) {
      std::string s;
      for (const auto& x : a)
        s += (s.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : x.dump());
      return s.empty() ? std::string("none") : s;
    };
    std::cout << "HEALTHY                      " << (healthy ? "yes" : "no")
              << "\nCONTROLLER                   "
              << (md->controller_id >= 0 ? std::to_string(md->controller_id) : "none")
              << "\nLIVE BROKERS                 " << JoinIds({live.begin(), live.end()})
              << "\nOFFLINE BROKERS              "
              << (admin_seen ? list(down) : "unknown (admin API at " + f.admin + " not answering)")
              << "\nOFFLINE PARTITIONS           " << list(offline)
              << "\nUNDER-REPLICATED PARTITIONS  " << list(under) << "\n";
  }
  return healthy ? kExitOk : kExitRefused;
}

}  // namespace

void AddClusterCommands(CLI::App& root, const std::shared_ptr<CommonFlags>& flags, Commands& out) {
  auto* cluster = root.add_subcommand("cluster", "the cluster's brokers and health");
  cluster->require_subcommand(1);
  auto add = [&](const char* name, const char* help, int (*fn)(KafkaAdmin&, const CommonFlags&),
                 bool admin) {
    CLI::App* sub = cluster->add_subcommand(name, help);
    AddCommonOptions(sub, *flags, true, admin);
    out.push_back({sub, [flags, fn] {
                     int code = kExitOk;
                     auto a = ConnectOrFail(*flags, &code);
                     return a ? fn(*a, *flags) : code;
                   }});
  };
  add("info", "cluster id, controller and brokers", Info, false);
  add("health",
      "exit 0 when every partition is led with a full ISR and no broker is offline, else 1", Health,
      true);
}

}  // namespace strata::app
