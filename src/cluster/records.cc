#include "cluster/records.h"

#include <nlohmann/json.hpp>

namespace strata::cluster {

namespace {

using nlohmann::json;

json Ids(const std::vector<NodeId>& ids) {
  json out = json::array();
  for (NodeId id : ids) out.push_back(id.value());
  return out;
}

std::vector<NodeId> IdsFrom(const json& doc, const char* field) {
  std::vector<NodeId> out;
  if (!doc.contains(field)) return out;
  for (const json& v : doc.at(field)) out.emplace_back(v.get<int32_t>());
  return out;
}

// Runs `decode` on the parsed value; any parse or type error becomes kCorrupt
// naming the record kind and what was wrong.
template <typename T, typename F>
Result<T> Decode(const char* kind, const std::string& value, F decode) {
  try {
    return decode(json::parse(value));
  } catch (const std::exception& e) {
    return MakeError(Errc::kCorrupt, std::string(kind) + " record: " + e.what());
  }
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

std::string EncodeBroker(const BrokerRegistration& b) {
  json listeners = json::array();
  for (const auto& l : b.listeners)
    listeners.push_back({{"name", l.name}, {"host", l.host}, {"port", l.port}});
  json doc{
      {"node_id", b.node_id.value()},      {"listeners", listeners}, {"rack", b.rack},
      {"state", BrokerStateName(b.state)}, {"capacity", b.capacity}, {"incarnation", b.incarnation},
      {"clean_shutdown", b.clean_shutdown}};
  return doc.dump();
}

Result<BrokerRegistration> DecodeBroker(const std::string& value) {
  return Decode<BrokerRegistration>(
      "broker", value, [](const json& doc) -> Result<BrokerRegistration> {
        BrokerRegistration b;
        b.node_id = NodeId(doc.at("node_id").get<int32_t>());
        for (const json& l : doc.at("listeners")) {
          b.listeners.push_back({l.at("name").get<std::string>(), l.at("host").get<std::string>(),
                                 l.at("port").get<int32_t>()});
        }
        b.rack = doc.value("rack", "");
        std::string state = doc.value("state", "active");
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
        b.capacity = doc.value("capacity", std::map<std::string, int64_t>{});
        b.incarnation = doc.value("incarnation", "");
        b.clean_shutdown = doc.value("clean_shutdown", true);
        return b;
      });
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
  return doc.dump();
}

Result<PartitionRecord> DecodePartition(const std::string& value) {
  return Decode<PartitionRecord>(
      "partition", value, [](const json& doc) -> Result<PartitionRecord> {
        PartitionRecord p;
        p.replicas = IdsFrom(doc, "replicas");
        p.isr = IdsFrom(doc, "isr");
        p.leader = NodeId(doc.at("leader").get<int32_t>());
        p.leader_epoch = LeaderEpoch(doc.at("leader_epoch").get<int32_t>());
        p.partition_epoch = PartitionEpoch(doc.at("partition_epoch").get<int32_t>());
        p.elr = IdsFrom(doc, "elr");
        p.last_known_elr = IdsFrom(doc, "last_known_elr");
        p.adding = IdsFrom(doc, "adding");
        p.removing = IdsFrom(doc, "removing");
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
    t.name = doc.at("name").get<std::string>();
    auto id = TopicIdFromBase64(doc.at("id").get<std::string>());
    if (!id) return MakeError(Errc::kCorrupt, "topic record: bad id");
    t.id = *id;
    t.partitions = doc.at("partitions").get<int32_t>();
    t.replication_factor = doc.value("replication_factor", int16_t{1});
    t.configs = doc.value("configs", std::map<std::string, std::string>{});
    t.internal = doc.value("internal", false);
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
  if (o.leader_epoch >= 0) doc["leader_epoch"] = o.leader_epoch;
  return doc.dump();
}

Result<RemoteLogOffsets> DecodeRemoteLogOffsets(const std::string& value) {
  return Decode<RemoteLogOffsets>(
      "remote log", value, [](const json& doc) -> Result<RemoteLogOffsets> {
        return RemoteLogOffsets{doc.at("start").get<int64_t>(), doc.at("end").get<int64_t>(),
                                doc.value("log_start", int64_t{-1}),
                                doc.value("leader_epoch", int32_t{-1})};
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
