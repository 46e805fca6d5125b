// `strata group list|describe|reset`.
#include <algorithm>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "app/cli.h"
#include "protocol/messages/consumer_group_describe.h"
#include "protocol/messages/describe_groups.h"
#include "protocol/messages/list_groups.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/offset_commit.h"
#include "protocol/messages/offset_fetch.h"

namespace strata::app {

namespace {

using nlohmann::json;

constexpr int16_t kListGroupsVersion = 4;
constexpr int16_t kDescribeGroupsVersion = 5;
constexpr int16_t kOffsetFetchVersion = 7;
constexpr int16_t kListOffsetsVersion = 7;
constexpr int16_t kOffsetCommitVersion = 8;
constexpr int16_t kConsumerGroupDescribeVersion = 1;
constexpr int16_t kGroupIdNotFound = 69;
constexpr int64_t kLatest = -1;
constexpr int64_t kEarliest = -2;

struct GroupFlags {
  std::string group;
  std::string topic;
  bool to_earliest = false;
  bool to_latest = false;
  int64_t to_offset = -1;
  bool execute = false;
};

using TopicPartition = std::pair<std::string, int32_t>;

int List(KafkaAdmin& admin, const CommonFlags& f, const GroupFlags&) {
  std::map<std::string, std::pair<std::string, std::string>> groups;  // id -> (state, type)
  for (int32_t node : admin.Brokers()) {  // each broker lists the groups it coordinates
    protocol::ListGroupsRequest req;
    auto r = admin.Call<protocol::ListGroupsRequest, protocol::ListGroupsResponse>(
        req, kListGroupsVersion, node);
    if (!r.ok())
      return Fail("group list: broker " + std::to_string(node) + ": " + r.error().message,
                  kExitUnreachable);
    if (r->error_code != 0) return Fail("group list: " + DescribeError(r->error_code, {}), 1);
    for (const auto& g : r->groups) groups[g.group_id] = {g.group_state, g.protocol_type};
  }
  json out = json::array();
  Table table({"GROUP", "STATE", "PROTOCOL-TYPE"});
  for (const auto& [id, g] : groups) {
    out.push_back({{"group", id}, {"state", g.first}, {"protocol_type", g.second}});
    table.Add({id, g.first, g.second.empty() ? "-" : g.second});
  }
  if (f.json()) {
    std::cout << out.dump(2) << "\n";
  } else {
    table.Print(std::cout);
  }
  return kExitOk;
}

// The partitions a consumer-protocol assignment names (Kafka's
// ConsumerProtocolAssignment: version, [topic, [partition]], user data).
std::vector<TopicPartition> DecodeAssignment(const Bytes& b) {
  std::vector<TopicPartition> out;
  size_t at = 0;
  auto need = [&](size_t n) { return at + n <= b.size(); };
  auto i16 = [&] {
    int16_t v = static_cast<int16_t>((b[at] << 8) | b[at + 1]);
    at += 2;
    return v;
  };
  auto i32 = [&] {
    int32_t v = static_cast<int32_t>((uint32_t(b[at]) << 24) | (uint32_t(b[at + 1]) << 16) |
                                     (uint32_t(b[at + 2]) << 8) | uint32_t(b[at + 3]));
    at += 4;
    return v;
  };
  if (!need(6)) return out;
  i16();  // version
  for (int32_t topics = i32(); topics > 0 && need(2); --topics) {
    const int16_t len = i16();
    if (len < 0 || !need(size_t(len) + 4)) return out;
    std::string topic(reinterpret_cast<const char*>(b.data()) + at, size_t(len));
    at += size_t(len);
    for (int32_t n = i32(); n > 0 && need(4); --n) out.push_back({topic, i32()});
  }
  return out;
}

// Each partition's offset at `timestamp` (kLatest, kEarliest), asked of its leader.
Result<std::map<TopicPartition, int64_t>> Offsets(KafkaAdmin& admin,
                                                  const std::set<std::string>& topics,
                                                  int64_t timestamp) {
  auto md = admin.Metadata(std::vector<std::string>(topics.begin(), topics.end()));
  if (!md.ok()) return md.take_error();
  std::map<int32_t, protocol::ListOffsetsRequest> by_leader;
  for (const auto& t : md->topics) {
    for (const auto& p : t.partitions) {
      if (p.leader_id < 0) continue;
      auto& req = by_leader[p.leader_id];
      if (req.topics.empty() || req.topics.back().name != t.name.value_or("")) {
        req.topics.push_back({t.name.value_or(""), {}});
      }
      protocol::ListOffsetsRequest::Partition part;
      part.partition_index = p.partition_index;
      part.timestamp = timestamp;
      req.topics.back().partitions.push_back(part);
    }
  }
  std::map<TopicPartition, int64_t> out;
  for (auto& [leader, req] : by_leader) {
    auto r = admin.Call<protocol::ListOffsetsRequest, protocol::ListOffsetsResponse>(
        req, kListOffsetsVersion, leader);
    if (!r.ok()) return r.take_error();
    for (const auto& t : r->topics) {
      for (const auto& p : t.partitions) {
        if (p.error_code == 0) out[{t.name, p.partition_index}] = p.offset;
      }
    }
  }
  return out;
}

Result<protocol::OffsetFetchResponse> Committed(KafkaAdmin& admin, int32_t coordinator,
                                                const std::string& group) {
  protocol::OffsetFetchRequest req;
  req.group_id = group;
  req.topics = std::nullopt;  // every partition with a committed offset
  return admin.Call<protocol::OffsetFetchRequest, protocol::OffsetFetchResponse>(
      req, kOffsetFetchVersion, coordinator);
}

// A group as the describe and reset commands need it, whichever protocol it
// speaks: KIP-848 groups answer ConsumerGroupDescribe, classic ones (and
// brokers without it) DescribeGroups, as Kafka's admin client asks them.
struct GroupView {
  std::string state;
  std::string protocol;  // the assignor
  size_t members = 0;
  std::map<TopicPartition, std::string> owner;
};

Result<GroupView> ViewGroup(KafkaAdmin& admin, int32_t coordinator, const std::string& group) {
  protocol::ConsumerGroupDescribeRequest creq;
  creq.group_ids = {group};
  auto c =
      admin.Call<protocol::ConsumerGroupDescribeRequest, protocol::ConsumerGroupDescribeResponse>(
          creq, kConsumerGroupDescribeVersion, coordinator);
  if (c.ok() && !c->groups.empty() && c->groups.front().error_code == 0) {
    const auto& cg = c->groups.front();
    GroupView v{cg.group_state, cg.assignor_name, cg.members.size(), {}};
    for (const auto& m : cg.members) {
      for (const auto& t : m.assignment.topic_partitions) {
        for (int32_t p : t.partitions) v.owner[{t.topic_name, p}] = m.member_id;
      }
    }
    return v;
  }
  if (c.ok() && !c->groups.empty() && c->groups.front().error_code != kGroupIdNotFound &&
      c->groups.front().error_code != 35 /* UNSUPPORTED_VERSION */) {
    return MakeError(Errc::kUnavailable, DescribeError(c->groups.front().error_code, {}));
  }
  protocol::DescribeGroupsRequest dreq;
  dreq.groups = {group};
  auto d = admin.Call<protocol::DescribeGroupsRequest, protocol::DescribeGroupsResponse>(
      dreq, kDescribeGroupsVersion, coordinator);
  if (!d.ok()) return d.take_error();
  if (d->groups.empty() || d->groups.front().error_code != 0) {
    return MakeError(Errc::kInvalidArgument,
                     DescribeError(d->groups.empty() ? -1 : d->groups.front().error_code, {}));
  }
  const auto& cg = d->groups.front();
  GroupView v{cg.group_state, cg.protocol_data, cg.members.size(), {}};
  for (const auto& m : cg.members) {
    for (const auto& tp : DecodeAssignment(m.member_assignment)) v.owner[tp] = m.member_id;
  }
  return v;
}

int Describe(KafkaAdmin& admin, const CommonFlags& f, const GroupFlags& g) {
  auto coordinator = admin.GroupCoordinator(g.group);
  if (!coordinator.ok()) return Fail("group describe: " + coordinator.error().message, 1);
  auto view = ViewGroup(admin, *coordinator, g.group);
  if (!view.ok()) {
    return Fail("group describe " + g.group + ": " + view.error().message,
                view.error().code == Errc::kInvalidArgument ? kExitRefused : kExitUnreachable);
  }
  const GroupView& group = *view;
  if (group.state == "Dead") return Fail("group " + g.group + " does not exist", 1);
  const std::map<TopicPartition, std::string>& owner = group.owner;
  auto committed = Committed(admin, *coordinator, g.group);
  if (!committed.ok()) return Fail("group describe: " + committed.error().message, 2);
  std::map<TopicPartition, int64_t> current;
  std::set<std::string> topics;
  for (const auto& t : committed->topics) {
    for (const auto& p : t.partitions) {
      if (p.committed_offset < 0) continue;
      current[{t.name, p.partition_index}] = p.committed_offset;
      topics.insert(t.name);
    }
  }
  for (const auto& [tp, member] : owner) topics.insert(tp.first);
  auto ends = Offsets(admin, topics, kLatest);
  if (!ends.ok()) return Fail("group describe: " + ends.error().message, kExitUnreachable);
  std::set<TopicPartition> rows;
  for (const auto& [tp, o] : current) rows.insert(tp);
  for (const auto& [tp, m] : owner) rows.insert(tp);
  json parts = json::array();
  int64_t total_lag = 0;
  Table table({"TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "MEMBER"});
  for (const auto& tp : rows) {
    auto c = current.find(tp);
    auto e = ends->find(tp);
    const int64_t end = e == ends->end() ? -1 : e->second;
    const int64_t lag = c != current.end() && end >= 0 ? std::max<int64_t>(0, end - c->second) : -1;
    if (lag > 0) total_lag += lag;
    auto owned_by = owner.find(tp);
    const std::string member = owned_by == owner.end() ? "" : owned_by->second;
    parts.push_back({{"topic", tp.first},
                     {"partition", tp.second},
                     {"current_offset", c == current.end() ? json(nullptr) : json(c->second)},
                     {"log_end_offset", end},
                     {"lag", lag < 0 ? json(nullptr) : json(lag)},
                     {"member", member}});
    table.Add({tp.first, std::to_string(tp.second),
               c == current.end() ? "-" : std::to_string(c->second), std::to_string(end),
               lag < 0 ? "-" : std::to_string(lag), member.empty() ? "-" : member});
  }
  if (f.json()) {
    std::cout << json{{"group", g.group},           {"state", group.state},
                      {"protocol", group.protocol}, {"coordinator", *coordinator},
                      {"members", group.members},   {"total_lag", total_lag},
                      {"partitions", parts}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << "GROUP        " << g.group << "\nSTATE        " << group.state << "\nCOORDINATOR  "
            << *coordinator << "\nMEMBERS      " << group.members << "\nTOTAL-LAG    " << total_lag
            << "\n\n";
  table.Print(std::cout);
  return kExitOk;
}

// kafka-consumer-groups --reset-offsets: a plan unless --execute, and only
// for a group with no members (its consumers would overwrite the offsets).
int Reset(KafkaAdmin& admin, const CommonFlags& f, const GroupFlags& g) {
  const int targets = int(g.to_earliest) + int(g.to_latest) + int(g.to_offset >= 0);
  if (targets != 1)
    return Fail("group reset: give one of --to-earliest, --to-latest, --to-offset", 2);
  auto coordinator = admin.GroupCoordinator(g.group);
  if (!coordinator.ok()) return Fail("group reset: " + coordinator.error().message, 1);
  auto view = ViewGroup(admin, *coordinator, g.group);
  if (!view.ok()) return Fail("group reset: cannot describe the group: " + view.error().message, 2);
  const std::string state = view->state;
  if (g.execute && state != "Empty" && state != "Dead") {
    return Fail("group reset: group " + g.group + " is " + state +
                    ": stop its consumers first (offsets can be reset only while it is Empty)",
                kExitRefused);
  }
  std::map<TopicPartition, int64_t> target;
  if (g.to_offset >= 0) {
    // As kafka-consumer-groups does: an offset outside a partition's log
    // is moved to its nearest end.
    auto earliest = Offsets(admin, {g.topic}, kEarliest);
    auto latest = Offsets(admin, {g.topic}, kLatest);
    if (!earliest.ok() || !latest.ok()) return Fail("group reset: cannot list offsets", 2);
    for (const auto& [tp, end] : *latest) {
      const int64_t start = earliest->count(tp) ? earliest->at(tp) : 0;
      target[tp] = std::clamp(g.to_offset, start, std::max(start, end));
    }
  } else {
    auto offsets = Offsets(admin, {g.topic}, g.to_earliest ? kEarliest : kLatest);
    if (!offsets.ok()) return Fail("group reset: " + offsets.error().message, 2);
    target = std::move(*offsets);
  }
  if (target.empty()) return Fail("group reset: no partitions of " + g.topic, kExitRefused);
  int code = kExitOk;
  std::map<TopicPartition, std::string> errors;
  if (g.execute) {
    protocol::OffsetCommitRequest req;
    req.group_id = g.group;
    req.topics.push_back({g.topic, {}});
    for (const auto& [tp, offset] : target) {
      protocol::OffsetCommitRequest::Partition p;
      p.partition_index = tp.second;
      p.committed_offset = offset;
      req.topics.back().partitions.push_back(p);
    }
    auto r = admin.Call<protocol::OffsetCommitRequest, protocol::OffsetCommitResponse>(
        req, kOffsetCommitVersion, *coordinator);
    if (!r.ok()) return Fail("group reset: " + r.error().message, kExitUnreachable);
    for (const auto& t : r->topics) {
      for (const auto& p : t.partitions) {
        if (p.error_code == 0) continue;
        errors[{t.name, p.partition_index}] = DescribeError(p.error_code, {});
        code = kExitRefused;
      }
    }
  }
  json out = json::array();
  Table table({"TOPIC", "PARTITION", "NEW-OFFSET", "ERROR"});
  for (const auto& [tp, offset] : target) {
    const std::string error = errors.count(tp) ? errors[tp] : "";
    out.push_back(
        {{"topic", tp.first}, {"partition", tp.second}, {"new_offset", offset}, {"error", error}});
    table.Add(
        {tp.first, std::to_string(tp.second), std::to_string(offset), error.empty() ? "-" : error});
  }
  if (f.json()) {
    std::cout << json{{"group", g.group}, {"executed", g.execute}, {"partitions", out}}.dump(2)
              << "\n";
  } else {
    table.Print(std::cout);
    if (!g.execute) std::cout << "(a plan: --execute commits these offsets)\n";
  }
  return code;
}

}  // namespace

void AddGroupCommands(CLI::App& root, const std::shared_ptr<CommonFlags>& flags, Commands& out) {
  auto g = std::make_shared<GroupFlags>();
  auto* group = root.add_subcommand("group", "consumer groups: list, describe with lag, reset");
  group->require_subcommand(1);
  auto add = [&](const char* name, const char* help,
                 int (*fn)(KafkaAdmin&, const CommonFlags&, const GroupFlags&)) {
    CLI::App* sub = group->add_subcommand(name, help);
    AddCommonOptions(sub, *flags, true, false);
    out.push_back({sub, [flags, g, fn] {
                     int code = kExitOk;
                     auto admin = ConnectOrFail(*flags, &code);
                     return admin ? fn(*admin, *flags, *g) : code;
                   }});
    return sub;
  };
  add("list", "every consumer group and its state", List);
  auto* describe = add("describe", "a group's members, offsets and lag", Describe);
  describe->add_option("group", g->group)->required();
  auto* reset = add("reset", "reset a group's offsets on a topic (a plan unless --execute)", Reset);
  reset->add_option("group", g->group)->required();
  reset->add_option("--topic,-t", g->topic)->required();
  reset->add_flag("--to-earliest", g->to_earliest);
  reset->add_flag("--to-latest", g->to_latest);
  reset->add_option("--to-offset", g->to_offset)->check(CLI::Range(int64_t(0), INT64_MAX));
  reset->add_flag("--execute", g->execute, "commit the new offsets (the group must be Empty)");
}

}  // namespace strata::app
