// `strata topic create|list|describe|alter|delete`.
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli.h"
#include "cluster/metadata_store.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/delete_topics.h"
#include "protocol/messages/describe_configs.h"
#include "protocol/messages/incremental_alter_configs.h"

namespace strata::app {

namespace {

using nlohmann::json;

constexpr int16_t kCreateTopicsVersion = 7;
constexpr int16_t kDeleteTopicsVersion = 6;
constexpr int16_t kDescribeConfigsVersion = 4;
constexpr int16_t kIncrementalAlterConfigsVersion = 1;
constexpr int8_t kTopicResource = 2;
constexpr int8_t kDynamicTopicConfig = 1;  // DescribeConfigs config_source

struct TopicFlags {
  std::vector<std::string> names;
  int32_t partitions = -1;
  int16_t replication_factor = -1;
  std::vector<std::string> set;     // key=value
  std::vector<std::string> remove;  // keys
  bool internal = false;
};

bool SplitAssignment(const std::string& kv, std::string* key, std::string* value) {
  size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  *key = kv.substr(0, eq);
  *value = kv.substr(eq + 1);
  return true;
}

int Create(KafkaAdmin& admin, const CommonFlags& f, const TopicFlags& t) {
  protocol::CreateTopicsRequest req;
  req.timeout_ms = static_cast<int32_t>(f.timeout_ms);
  for (const auto& name : t.names) {
    protocol::CreateTopicsRequest::Topic topic;
    topic.name = name;
    topic.num_partitions = t.partitions;
    topic.replication_factor = t.replication_factor;
    for (const auto& kv : t.set) {
      std::string k, v;
      if (!SplitAssignment(kv, &k, &v)) return Fail("--config wants key=value: " + kv, 2);
      topic.configs.push_back({k, v});
    }
    req.topics.push_back(std::move(topic));
  }
  auto r = admin.Call<protocol::CreateTopicsRequest, protocol::CreateTopicsResponse>(
      req, kCreateTopicsVersion);
  if (!r.ok()) return Fail("topic create: " + r.error().message, kExitUnreachable);
  int code = kExitOk;
  json out = json::array();
  Table table({"TOPIC", "PARTITIONS", "REPLICATION-FACTOR", "ERROR"});
  for (const auto& topic : r->topics) {
    const std::string error = DescribeError(topic.error_code, topic.error_message);
    if (!error.empty()) code = kExitRefused;
    out.push_back({{"topic", topic.name},
                   {"partitions", topic.num_partitions},
                   {"replication_factor", topic.replication_factor},
                   {"error", error}});
    table.Add({topic.name, std::to_string(topic.num_partitions),
               std::to_string(topic.replication_factor), error.empty() ? "-" : error});
  }
  if (f.json()) {
    std::cout << out.dump(2) << "\n";
  } else {
    table.Print(std::cout);
  }
  return code;
}

int List(KafkaAdmin& admin, const CommonFlags& f, const TopicFlags& t) {
  auto md = admin.Metadata();
  if (!md.ok()) return Fail("topic list: " + md.error().message, kExitUnreachable);
  json out = json::array();
  Table table({"NAME", "PARTITIONS", "REPLICAS", "INTERNAL"});
  std::vector<const protocol::MetadataResponse::Topic*> topics;
  for (const auto& topic : md->topics) {
    if (topic.is_internal && !t.internal) continue;
    topics.push_back(&topic);
  }
  std::sort(topics.begin(), topics.end(),
            [](auto* a, auto* b) { return a->name.value_or("") < b->name.value_or(""); });
  for (const auto* topic : topics) {
    const size_t replicas =
        topic->partitions.empty() ? 0 : topic->partitions.front().replica_nodes.size();
    out.push_back({{"name", topic->name.value_or("")},
                   {"partitions", topic->partitions.size()},
                   {"replicas", replicas},
                   {"internal", topic->is_internal}});
    table.Add({topic->name.value_or(""), std::to_string(topic->partitions.size()),
               std::to_string(replicas), topic->is_internal ? "yes" : "no"});
  }
  if (f.json()) {
    std::cout << out.dump(2) << "\n";
  } else {
    table.Print(std::cout);
  }
  return kExitOk;
}

// The topic's configs set on it (not defaults), or an error.
Result<std::map<std::string, std::string>> TopicConfigs(KafkaAdmin& admin,
                                                        const std::string& topic) {
  protocol::DescribeConfigsRequest req;
  req.resources.push_back({kTopicResource, topic, std::nullopt});
  auto r = admin.Call<protocol::DescribeConfigsRequest, protocol::DescribeConfigsResponse>(
      req, kDescribeConfigsVersion);
  if (!r.ok()) return r.take_error();
  std::map<std::string, std::string> out;
  for (const auto& res : r->results) {
    if (res.error_code != 0) {
      return MakeError(Errc::kNotFound, DescribeError(res.error_code, res.error_message));
    }
    for (const auto& c : res.configs) {
      if (c.config_source == kDynamicTopicConfig) out[c.name] = c.value.value_or("");
    }
  }
  return out;
}

int Describe(KafkaAdmin& admin, const CommonFlags& f, const TopicFlags& t) {
  json all = json::array();
  int code = kExitOk;
  for (const auto& name : t.names) {
    auto md = admin.Metadata(std::vector<std::string>{name});
    if (!md.ok()) return Fail("topic describe: " + md.error().message, kExitUnreachable);
    if (md->topics.empty() || md->topics.front().error_code != 0) {
      code = Fail("topic describe " + name + ": " +
                      DescribeError(md->topics.empty() ? 3 : md->topics.front().error_code, {}),
                  kExitRefused);
      continue;
    }
    const auto& topic = md->topics.front();
    auto configs = TopicConfigs(admin, name);
    if (!configs.ok()) return Fail("topic describe " + name + ": " + configs.error().message, 1);
    json parts = json::array();
    Table table({"PARTITION", "LEADER", "EPOCH", "REPLICAS", "ISR", "OFFLINE"});
    auto sorted = topic.partitions;
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.partition_index < b.partition_index; });
    for (const auto& p : sorted) {
      parts.push_back({{"partition", p.partition_index},
                       {"leader", p.leader_id},
                       {"leader_epoch", p.leader_epoch},
                       {"replicas", p.replica_nodes},
                       {"isr", p.isr_nodes},
                       {"offline_replicas", p.offline_replicas},
                       {"error", DescribeError(p.error_code, {})}});
      table.Add({std::to_string(p.partition_index), std::to_string(p.leader_id),
                 std::to_string(p.leader_epoch), JoinIds(p.replica_nodes), JoinIds(p.isr_nodes),
                 p.offline_replicas.empty() ? "-" : JoinIds(p.offline_replicas)});
    }
    all.push_back({{"name", name},
                   {"topic_id", cluster::UuidToBase64(topic.topic_id)},
                   {"internal", topic.is_internal},
                   {"configs", *configs},
                   {"partitions", parts}});
    if (!f.json()) {
      std::cout << "NAME        " << name << "\nPARTITIONS  " << topic.partitions.size()
                << "\nINTERNAL    " << (topic.is_internal ? "yes" : "no") << "\n";
      std::cout << "CONFIGS     ";
      std::string sep;
      for (const auto& [k, v] : *configs) {
        std::cout << sep << k << "=" << v;
        sep = ", ";
      }
      std::cout << (configs->empty() ? "(defaults)" : "") << "\n\n";
      table.Print(std::cout);
    }
  }
  if (f.json()) std::cout << (t.names.size() == 1 && !all.empty() ? all[0] : all).dump(2) << "\n";
  return code;
}

int Alter(KafkaAdmin& admin, const CommonFlags& f, const TopicFlags& t) {
  if (t.set.empty() && t.remove.empty()) return Fail("topic alter: nothing to change", 2);
  protocol::IncrementalAlterConfigsRequest req;
  for (const auto& name : t.names) {
    protocol::IncrementalAlterConfigsRequest::Resource res;
    res.resource_type = kTopicResource;
    res.resource_name = name;
    for (const auto& kv : t.set) {
      std::string k, v;
      if (!SplitAssignment(kv, &k, &v)) return Fail("--set wants key=value: " + kv, 2);
      res.configs.push_back({k, 0, v});  // SET
    }
    for (const auto& k : t.remove) res.configs.push_back({k, 1, std::nullopt});  // DELETE
    req.resources.push_back(std::move(res));
  }
  auto r =
      admin.Call<protocol::IncrementalAlterConfigsRequest,
                 protocol::IncrementalAlterConfigsResponse>(req, kIncrementalAlterConfigsVersion);
  if (!r.ok()) return Fail("topic alter: " + r.error().message, kExitUnreachable);
  int code = kExitOk;
  json out = json::array();
  for (const auto& res : r->responses) {
    const std::string error = DescribeError(res.error_code, res.error_message);
    if (!error.empty()) code = Fail("topic alter " + res.resource_name + ": " + error, 1);
    out.push_back({{"topic", res.resource_name}, {"error", error}});
    if (!f.json() && error.empty()) std::cout << "altered " << res.resource_name << "\n";
  }
  if (f.json()) std::cout << out.dump(2) << "\n";
  return code;
}

int Delete(KafkaAdmin& admin, const CommonFlags& f, const TopicFlags& t) {
  protocol::DeleteTopicsRequest req;
  req.timeout_ms = static_cast<int32_t>(f.timeout_ms);
  for (const auto& name : t.names) req.topics.push_back({name, {}});
  auto r = admin.Call<protocol::DeleteTopicsRequest, protocol::DeleteTopicsResponse>(
      req, kDeleteTopicsVersion);
  if (!r.ok()) return Fail("topic delete: " + r.error().message, kExitUnreachable);
  int code = kExitOk;
  json out = json::array();
  for (const auto& res : r->responses) {
    const std::string name = res.name.value_or("");
    const std::string error = DescribeError(res.error_code, res.error_message);
    if (!error.empty()) code = Fail("topic delete " + name + ": " + error, kExitRefused);
    out.push_back({{"topic", name}, {"error", error}});
    if (!f.json() && error.empty()) std::cout << "deleted " << name << "\n";
  }
  if (f.json()) std::cout << out.dump(2) << "\n";
  return code;
}

}  // namespace

void AddTopicCommands(CLI::App& root, const std::shared_ptr<CommonFlags>& flags, Commands& out) {
  auto t = std::make_shared<TopicFlags>();
  auto* topic = root.add_subcommand("topic", "create, list, describe, alter and delete topics");
  topic->require_subcommand(1);
  auto add = [&](const char* name, const char* help,
                 int (*fn)(KafkaAdmin&, const CommonFlags&, const TopicFlags&)) {
    CLI::App* sub = topic->add_subcommand(name, help);
    AddCommonOptions(sub, *flags, true, false);
    out.push_back({sub, [flags, t, fn] {
                     int code = kExitOk;
                     auto admin = ConnectOrFail(*flags, &code);
                     return admin ? fn(*admin, *flags, *t) : code;
                   }});
    return sub;
  };
  auto* create = add("create", "create topics", Create);
  create->add_option("names", t->names, "topic names")->required();
  create->add_option("--partitions,-p", t->partitions, "(default: the broker's num.partitions)");
  create->add_option("--replication-factor,-r", t->replication_factor,
                     "(default: the broker's default.replication.factor)");
  create->add_option("--config,-c", t->set, "topic config key=value (repeatable)");
  auto* list = add("list", "list topics", List);
  list->add_flag("--internal,-i", t->internal, "include internal topics");
  auto* describe = add("describe", "a topic's partitions, leaders, ISR and configs", Describe);
  describe->add_option("names", t->names, "topic names")->required();
  auto* alter = add("alter", "set or remove topic configs", Alter);
  alter->add_option("names", t->names, "topic names")->required();
  alter->add_option("--set,-s", t->set, "key=value (repeatable)");
  alter->add_option("--delete,-d", t->remove, "config key to remove (repeatable)");
  auto* del = add("delete", "delete topics", Delete);
  del->add_option("names", t->names, "topic names")->required();
}

}  // namespace strata::app
