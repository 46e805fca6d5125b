// One-time import of the metadata files that brokers wrote before the
// embedded store became a KvStore (strata-metadata.json and
// strata-remote-log.json), so an existing data directory keeps its topics,
// topic ids (remote data is stored under them), remote log bounds and
// producer-id block. The files are renamed to *.imported afterwards.
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "base/log.h"
#include "cluster/embedded_kv_store.h"
#include "cluster/keys.h"
#include "cluster/metadata.h"
#include "cluster/records.h"

namespace strata::cluster {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kLegacyMetadata = "strata-metadata.json";
constexpr const char* kLegacyRemote = "strata-remote-log.json";

TopicId FromHex(const std::string& s) {
  TopicId id{};
  for (size_t i = 0; i < 16 && 2 * i + 1 < s.size(); ++i) {
    id[i] = static_cast<uint8_t>(std::stoi(s.substr(2 * i, 2), nullptr, 16));
  }
  return id;
}

Result<json> ReadJson(const fs::path& path) {
  std::ifstream in(path);
  try {
    return json::parse(in);
  } catch (const std::exception& e) {
    return MakeError(Errc::kCorrupt, "metadata file " + path.string() + ": " + e.what());
  }
}

// The ops that recreate the legacy state; throws on a malformed document.
std::vector<KvOp> ImportOps(const json& doc, const json* remote, const KeyLayout& keys,
                            NodeId node) {
  std::vector<KvOp> ops;
  ops.push_back(KvOp::Put(keys.ClusterId(), doc.at("cluster_id").get<std::string>()));
  ops.push_back(
      KvOp::Put(keys.ProducerIds(), std::to_string(doc.value("next_producer_id", int64_t{0}))));
  for (const auto& t : doc.at("topics")) {
    TopicRecord r;
    r.name = t.at("name").get<std::string>();
    r.id = FromHex(t.at("id").get<std::string>());
    r.partitions = t.at("partitions").get<int32_t>();
    r.replication_factor = t.value("replication_factor", int16_t{1});
    r.configs = t.value("configs", std::map<std::string, std::string>{});
    r.internal = t.value("internal", false);
    for (int32_t p = 0; p < r.partitions; ++p) {
      PartitionRecord rec;
      rec.replicas = rec.isr = {node};
      rec.leader = node;
      ops.push_back(KvOp::Put(keys.Partition(UuidToBase64(r.id), p), EncodePartition(rec)));
    }
    ops.push_back(KvOp::Put(keys.Topic(r.name), EncodeTopic(r)));
  }
  if (remote) {
    for (const auto& [key, o] : remote->at("partitions").items()) {
      auto colon = key.rfind(':');
      RemoteLogOffsets off{o.at("start").get<int64_t>(), o.at("end").get<int64_t>(),
                           o.value("log_start", int64_t{-1})};
      ops.push_back(
          KvOp::Put(keys.RemoteLog(key.substr(0, colon), std::stoi(key.substr(colon + 1))),
                    EncodeRemoteLogOffsets(off)));
    }
    for (const auto& dir : remote->value("pending_deletions", std::vector<std::string>{})) {
      ops.push_back(KvOp::Put(keys.PendingDeletion(dir), dir));
    }
  }
  return ops;
}

Status ImportInto(const fs::path& dir, KvStore& kv, const KeyLayout& keys, NodeId node) {
  fs::path md = dir / kLegacyMetadata;
  if (!fs::exists(md)) return Status::Ok();
  STRATA_ASSIGN_OR_RETURN(json doc, ReadJson(md));
  std::optional<json> remote;
  if (fs::exists(dir / kLegacyRemote)) {
    STRATA_ASSIGN_OR_RETURN(remote, ReadJson(dir / kLegacyRemote));
  }
  std::vector<KvOp> ops;
  try {
    ops = ImportOps(doc, remote ? &*remote : nullptr, keys, node);
  } catch (const std::exception& e) {
    return MakeError(Errc::kCorrupt, "metadata file " + md.string() + ": " + e.what());
  }
  STRATA_ASSIGN_OR_RETURN(TxnResult r, WriteInBatches(kv, {}, ops));
  (void)r;
  std::error_code ec;
  for (const char* name : {kLegacyMetadata, kLegacyRemote}) {
    if (fs::exists(dir / name)) fs::rename(dir / name, dir / (std::string(name) + ".imported"), ec);
  }
  log::Get("metadata")->info("imported {} metadata records from {}", ops.size(), md.string());
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<MetadataStore>> OpenEmbeddedMetadataStore(const fs::path& dir) {
  MetadataOptions options;
  options.dir = dir;
  STRATA_ASSIGN_OR_RETURN(auto md, Metadata::Open(options));
  return std::unique_ptr<MetadataStore>(std::move(md));
}

Status ImportLegacyMetadata(const fs::path& dir, KvStore& kv, const KeyLayout& keys, NodeId node) {
  return ImportInto(dir, kv, keys, node);
}

TopicId RandomTopicId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  TopicId id{};
  do {
    for (size_t i = 0; i < 16; i += 8) {
      uint64_t r = rng();
      std::memcpy(id.data() + i, &r, 8);
    }
  } while (id == TopicId{});
  return id;
}

std::string UuidToBase64(const TopicId& id) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t buf = 0;
  int bits = 0;
  for (uint8_t b : id) {
    buf = (buf << 8) | b;
    bits += 8;
    while (bits >= 6) {
      out += alphabet[(buf >> (bits - 6)) & 63];
      bits -= 6;
    }
  }
  if (bits > 0) out += alphabet[(buf << (6 - bits)) & 63];
  return out;
}

}  // namespace strata::cluster
