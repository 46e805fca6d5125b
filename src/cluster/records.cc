#include "cluster/records.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "cluster/json_fields.h"

namespace strata::cluster {

namespace {

using nlohmann::json;
using namespace json_fields;

json Ids(const std::vector<NodeId>& ids) {
  json out = json::array();
  for (NodeId id : ids) out.push_back(id.value());
  return out;
}

std::vector<NodeId> IdsFrom(const json& doc, const char* field) {
  std::vector<NodeId> out;
  if (!doc.contains(field)) return out;
  for (const json& v : Array(doc, field)) out.emplace_back(As<int32_t>(v, field));
  return out;
}

// A node id written as a JSON object's key.
std::optional<NodeId> ParseNodeId(const std::string& text) {
  int32_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return NodeId(v);
}

}  // namespace

const char* BrokerStateName(BrokerState s) {
  switch (s) {
    case BrokerState::kActive:
      return "active";
    case BrokerState::kStandby:
      return "standby";
    case BrokerState::kDraining:
      return "draining";
    case BrokerState::kFenced:
      return "fenced";
    case BrokerState::kShuttingDown:
      return "controlled_shutdown";
  }
  return "?";
}

bool EligibleForLeadership(BrokerState s) {
  return s != BrokerState::kFenced && s != BrokerState::kShuttingDown;
}

const BrokerListener* FindListener(const BrokerRegistration& r, std::string_view name) {
  for (const BrokerListener& l : r.listeners) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

const BrokerListener* InterBrokerEndpoint(const BrokerRegistration& r) {
  if (const BrokerListener* l = FindListener(r, r.inter_broker_listener)) return l;
  return r.listeners.empty() ? nullptr : &r.listeners.front();
}

std::string EncodeBroker(const BrokerRegistration& b) {
  json listeners = json::array();
  for (const auto& l : b.listeners)
    listeners.push_back({{"name", l.name}, {"host", l.host}, {"port", l.port}});
  json doc{
      {"node_id", b.node_id.value()},      {"listeners", listeners}, {"rack", b.rack},
      {"state", BrokerStateName(b.state)}, {"capacity", b.capacity}, {"incarnation", b.incarnation},
      {"clean_shutdown", b.clean_shutdown}};
  if (!b.inter_broker_listener.empty()) doc["inter_broker_listener"] = b.inter_broker_listener;
  if (b.new_log_dir_epoch >= 0) doc["new_log_dir_epoch"] = b.new_log_dir_epoch;
  if (b.left_cleanly) doc["left_cleanly"] = true;
  return doc.dump();
}

std::string JoinIds(const std::vector<NodeId>& ids) {
  std::string out;
  for (NodeId id : ids) out += (out.empty() ? "" : ",") + std::to_string(id.value());
  return out;
}

Result<BrokerRegistration> DecodeBroker(const std::string& value) {
  return Decode<BrokerRegistration>(
      "broker", value, [](const json& doc) -> Result<BrokerRegistration> {
        BrokerRegistration b;
        b.node_id = NodeId(Field<int32_t>(doc, "node_id"));
        for (const json& l : Array(doc, "listeners")) {
          b.listeners.push_back({Field<std::string>(l, "name"), Field<std::string>(l, "host"),
                                 Field<int32_t>(l, "port")});
        }
        b.inter_broker_listener = Field<std::string>(doc, "inter_broker_listener", "");
        b.rack = Field<std::string>(doc, "rack", "");
        std::string state = Field<std::string>(doc, "state", "active");
        if (state == "active") {
          b.state = BrokerState::kActive;
        } else if (state == "standby") {
          b.state = BrokerState::kStandby;
        } else if (state == "draining") {
          b.state = BrokerState::kDraining;
        } else if (state == "fenced") {
          b.state = BrokerState::kFenced;
        } else if (state == "controlled_shutdown") {
          b.state = BrokerState::kShuttingDown;
        } else {
          return MakeError(Errc::kCorrupt, "broker record: unknown state '" + state + "'");
        }
        if (doc.contains("capacity")) {
          for (const auto& [name, v] : Object(doc, "capacity").items())
            b.capacity[name] = As<int64_t>(v, "capacity." + name);
        }
        b.incarnation = Field<std::string>(doc, "incarnation", "");
        b.clean_shutdown = Field<bool>(doc, "clean_shutdown", true);
        b.new_log_dir_epoch = Field<int64_t>(doc, "new_log_dir_epoch", -1);
        b.left_cleanly = Field<bool>(doc, "left_cleanly", false);
        return b;
      });
}

int64_t LostDataBefore(const BrokerRegistration& r, BrokerEpoch epoch) {
  if (r.new_log_dir_epoch < 0) return 0;
  return r.new_log_dir_epoch == 0 ? epoch.value() : r.new_log_dir_epoch;
}

bool RemoteStorageEnabled(const TopicRecord& t) {
  auto it = t.configs.find("remote.storage.enable");
  return it != t.configs.end() && it->second == "true";
}

bool RemoteContiguous(const PartitionRecord& p, NodeId id) {
  return std::find(p.non_contiguous.begin(), p.non_contiguous.end(), id) == p.non_contiguous.end();
}

std::string EncodePartition(const PartitionRecord& p) {
  json doc{{"replicas", Ids(p.replicas)},
           {"isr", Ids(p.isr)},
           {"leader", p.leader.value()},
           {"leader_epoch", p.leader_epoch.value()},
           {"partition_epoch", p.partition_epoch.value()},
           {"elr", Ids(p.elr)},
           {"last_known_elr", Ids(p.last_known_elr)}};
  if (!p.adding.empty()) doc["adding"] = Ids(p.adding);
  if (!p.removing.empty()) doc["removing"] = Ids(p.removing);
  if (!p.non_contiguous.empty()) doc["non_contiguous"] = Ids(p.non_contiguous);
  if (!p.forgot_lost_data.empty()) {
    json forgot = json::object();
    for (const auto& [id, before] : p.forgot_lost_data) forgot[std::to_string(id.value())] = before;
    doc["forgot_lost_data"] = std::move(forgot);
  }
  return doc.dump();
}

Result<PartitionRecord> DecodePartition(const std::string& value) {
  return Decode<PartitionRecord>(
      "partition", value, [](const json& doc) -> Result<PartitionRecord> {
        PartitionRecord p;
        p.replicas = IdsFrom(doc, "replicas");
        p.isr = IdsFrom(doc, "isr");
        p.leader = NodeId(Field<int32_t>(doc, "leader"));
        p.leader_epoch = LeaderEpoch(Field<int32_t>(doc, "leader_epoch"));
        p.partition_epoch = PartitionEpoch(Field<int32_t>(doc, "partition_epoch"));
        p.elr = IdsFrom(doc, "elr");
        p.last_known_elr = IdsFrom(doc, "last_known_elr");
        p.adding = IdsFrom(doc, "adding");
        p.removing = IdsFrom(doc, "removing");
        p.non_contiguous = IdsFrom(doc, "non_contiguous");
        for (const auto& [id, before] :
             Field<std::map<std::string, int64_t>>(doc, "forgot_lost_data", {})) {
          auto node = ParseNodeId(id);
          if (!node) return MakeError(Errc::kCorrupt, "partition record: bad node id " + id);
          p.forgot_lost_data[*node] = before;
        }
        if (p.replicas.empty()) return MakeError(Errc::kCorrupt, "partition record: no replicas");
        return p;
      });
}

std::string EncodeTopic(const TopicRecord& t) {
  json doc{{"name", t.name},
           {"id", UuidToBase64(t.id)},
           {"partitions", t.partitions},
           {"replication_factor", t.replication_factor},
           {"configs", t.configs},
           {"internal", t.internal}};
  return doc.dump();
}

Result<TopicRecord> DecodeTopic(const std::string& value) {
  return Decode<TopicRecord>("topic", value, [](const json& doc) -> Result<TopicRecord> {
    TopicRecord t;
    t.name = Field<std::string>(doc, "name");
    auto id = TopicIdFromBase64(Field<std::string>(doc, "id"));
    if (!id) return MakeError(Errc::kCorrupt, "topic record: bad id");
    t.id = *id;
    t.partitions = Field<int32_t>(doc, "partitions");
    t.replication_factor = Field<int16_t>(doc, "replication_factor", 1);
    t.configs = Field<std::map<std::string, std::string>>(doc, "configs", {});
    t.internal = Field<bool>(doc, "internal", false);
    if (t.partitions < 1) return MakeError(Errc::kCorrupt, "topic record: partitions < 1");
    return t;
  });
}

std::string EncodeConfigs(const std::map<std::string, std::string>& configs) {
  return json(configs).dump();
}

Result<std::map<std::string, std::string>> DecodeConfigs(const std::string& value) {
  return Decode<std::map<std::string, std::string>>(
      "broker configs", value, [](const json& doc) -> Result<std::map<std::string, std::string>> {
        return doc.get<std::map<std::string, std::string>>();
      });
}

std::string EncodeRemoteLogOffsets(const RemoteLogOffsets& o) {
  json doc{{"start", o.start}, {"end", o.end}, {"log_start", o.log_start}};
  if (o.leader_epoch != kNoLeaderEpoch) doc["leader_epoch"] = o.leader_epoch.value();
  return doc.dump();
}

Result<RemoteLogOffsets> DecodeRemoteLogOffsets(const std::string& value) {
  return Decode<RemoteLogOffsets>(
      "remote log", value, [](const json& doc) -> Result<RemoteLogOffsets> {
        return RemoteLogOffsets{Field<int64_t>(doc, "start"), Field<int64_t>(doc, "end"),
                                Field<int64_t>(doc, "log_start", -1),
                                LeaderEpoch(Field<int32_t>(doc, "leader_epoch", -1))};
      });
}

std::optional<TopicId> TopicIdFromBase64(const std::string& text) {
  static const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  if (text.size() != 22) return std::nullopt;
  TopicId id{};
  uint32_t buf = 0;
  int bits = 0;
  size_t out = 0;
  for (char c : text) {
    auto pos = alphabet.find(c);
    if (pos == std::string::npos) return std::nullopt;
    buf = (buf << 6) | static_cast<uint32_t>(pos);
    bits += 6;
    if (bits >= 8) {
      if (out < id.size()) id[out++] = static_cast<uint8_t>(buf >> (bits - 8));
      bits -= 8;
    }
  }
  if (out != id.size()) return std::nullopt;
  return id;
}

}  // namespace strata::cluster
