// The embedded, single-node MetadataStore: the whole state as one JSON
// document, rewritten atomically (write temp, fsync, rename, fsync dir) on
// every change. Metadata changes are rare (topic admin), so simplicity wins
// over a journal here.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "base/log.h"
#include "cluster/metadata_store.h"

namespace strata::cluster {

namespace {

using nlohmann::json;

std::string Hex(const TopicId& id) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : id) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

TopicId FromHex(const std::string& s) {
  TopicId id{};
  for (size_t i = 0; i < 16 && 2 * i + 1 < s.size(); ++i) {
    id[i] = static_cast<uint8_t>(std::stoi(s.substr(2 * i, 2), nullptr, 16));
  }
  return id;
}

Status FsyncPath(const std::filesystem::path& p, int flags) {
  int fd = ::open(p.c_str(), flags);
  if (fd < 0) return MakeError(Errc::kIoError, "open " + p.string() + ": " + strerror(errno));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return MakeError(Errc::kIoError, "fsync " + p.string() + ": " + strerror(errno));
  return Status::Ok();
}

// Replaces dir/name with `doc` crash-safely (temp file, fsync, rename, fsync dir).
Status WriteJsonAtomic(const std::filesystem::path& dir, const std::string& name, const json& doc) {
  auto tmp = dir / (name + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << doc.dump(2);
    if (!out) return MakeError(Errc::kIoError, "write " + tmp.string());
  }
  STRATA_RETURN_IF_ERROR(FsyncPath(tmp, O_RDONLY));
  std::error_code ec;
  std::filesystem::rename(tmp, dir / name, ec);
  if (ec) return MakeError(Errc::kIoError, "rename " + tmp.string() + ": " + ec.message());
  return FsyncPath(dir, O_RDONLY | O_DIRECTORY);
}

constexpr const char* kMetadataFile = "strata-metadata.json";
// Remote log bounds change with every tiered upload: a file (and mutex) of
// their own, so those writes never delay topic lookups.
constexpr const char* kRemoteLogFile = "strata-remote-log.json";

std::string RemoteKey(const std::string& topic_id, int32_t partition) {
  return topic_id + ":" + std::to_string(partition);
}

class EmbeddedMetadataStore : public MetadataStore {
 public:
  explicit EmbeddedMetadataStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

  Status Load() {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) return MakeError(Errc::kIoError, "create " + dir_.string() + ": " + ec.message());
    auto path = file();
    if (!std::filesystem::exists(path)) {
      cluster_id_ = UuidToBase64(RandomTopicId());
      return Persist();
    }
    std::ifstream in(path);
    json doc;
    try {
      doc = json::parse(in);
      cluster_id_ = doc.at("cluster_id").get<std::string>();
      next_producer_id_ = doc.value("next_producer_id", int64_t{0});
      for (const auto& t : doc.at("topics")) {
        TopicRecord r;
        r.name = t.at("name").get<std::string>();
        r.id = FromHex(t.at("id").get<std::string>());
        r.partitions = t.at("partitions").get<int32_t>();
        r.replication_factor = t.value("replication_factor", int16_t{1});
        r.configs = t.value("configs", std::map<std::string, std::string>{});
        r.internal = t.value("internal", false);
        topics_[r.name] = r;
      }
    } catch (const std::exception& e) {
      return MakeError(Errc::kCorrupt, "metadata file " + path.string() + ": " + e.what());
    }
    return LoadRemote();
  }

  std::string cluster_id() const override { return cluster_id_; }

  Result<TopicRecord> CreateTopic(TopicRecord topic) override {
    std::lock_guard lock(mu_);
    if (topics_.count(topic.name)) {
      return MakeError(Errc::kAlreadyExists, "topic '" + topic.name + "' already exists");
    }
    topic.id = RandomTopicId();
    topics_[topic.name] = topic;
    Status st = Persist();
    if (!st.ok()) {
      topics_.erase(topic.name);
      return st.take_error();
    }
    return topic;
  }

  Status DeleteTopic(const std::string& name) override {
    std::lock_guard lock(mu_);
    auto it = topics_.find(name);
    if (it == topics_.end()) return MakeError(Errc::kNotFound, "topic '" + name + "' not found");
    TopicRecord saved = it->second;
    topics_.erase(it);
    Status st = Persist();
    if (!st.ok()) {
      topics_[name] = saved;
      return st;
    }
    ForgetRemote(saved.id);
    return st;
  }

  Status SetRemoteLogOffsets(const std::string& topic_id, int32_t partition,
                             const RemoteLogOffsets& offsets) override {
    std::lock_guard lock(remote_mu_);
    auto& slot = remote_[RemoteKey(topic_id, partition)];
    if (slot == offsets) return Status::Ok();
    RemoteLogOffsets saved = slot;
    slot = offsets;
    Status st = PersistRemoteLocked();
    if (!st.ok()) slot = saved;
    return st;
  }

  Status AddPendingRemoteDeletion(const std::string& remote_dir) override {
    std::lock_guard lock(remote_mu_);
    if (!pending_deletions_.insert(remote_dir).second) return Status::Ok();
    Status st = PersistRemoteLocked();
    if (!st.ok()) pending_deletions_.erase(remote_dir);
    return st;
  }

  Status RemovePendingRemoteDeletion(const std::string& remote_dir) override {
    std::lock_guard lock(remote_mu_);
    if (pending_deletions_.erase(remote_dir) == 0) return Status::Ok();
    Status st = PersistRemoteLocked();
    if (!st.ok()) pending_deletions_.insert(remote_dir);
    return st;
  }

  std::vector<std::string> PendingRemoteDeletions() const override {
    std::lock_guard lock(remote_mu_);
    return {pending_deletions_.begin(), pending_deletions_.end()};
  }

  std::optional<RemoteLogOffsets> GetRemoteLogOffsets(const std::string& topic_id,
                                                      int32_t partition) const override {
    std::lock_guard lock(remote_mu_);
    auto it = remote_.find(RemoteKey(topic_id, partition));
    if (it == remote_.end()) return std::nullopt;
    return it->second;
  }

  std::optional<TopicRecord> GetTopic(const std::string& name) const override {
    std::lock_guard lock(mu_);
    auto it = topics_.find(name);
    if (it == topics_.end()) return std::nullopt;
    return it->second;
  }

  std::vector<TopicRecord> ListTopics() const override {
    std::lock_guard lock(mu_);
    std::vector<TopicRecord> out;
    for (const auto& [_, t] : topics_) out.push_back(t);
    return out;
  }

  Status SetPartitionCount(const std::string& name, int32_t partitions) override {
    std::lock_guard lock(mu_);
    auto it = topics_.find(name);
    if (it == topics_.end()) return MakeError(Errc::kNotFound, "topic '" + name + "' not found");
    if (partitions <= it->second.partitions) {
      return MakeError(Errc::kInvalidArgument, "partition count can only grow");
    }
    int32_t old = it->second.partitions;
    it->second.partitions = partitions;
    Status st = Persist();
    if (!st.ok()) it->second.partitions = old;
    return st;
  }

  Status SetTopicConfigs(const std::string& name,
                         std::map<std::string, std::string> configs) override {
    std::lock_guard lock(mu_);
    auto it = topics_.find(name);
    if (it == topics_.end()) return MakeError(Errc::kNotFound, "topic '" + name + "' not found");
    auto old = std::move(it->second.configs);
    it->second.configs = std::move(configs);
    Status st = Persist();
    if (!st.ok()) it->second.configs = std::move(old);
    return st;
  }

  Result<int64_t> AllocateProducerIds(int64_t count) override {
    std::lock_guard lock(mu_);
    int64_t first = next_producer_id_;
    next_producer_id_ += count;
    Status st = Persist();
    if (!st.ok()) {
      next_producer_id_ = first;
      return st.take_error();
    }
    return first;
  }

 private:
  std::filesystem::path file() const { return dir_ / kMetadataFile; }

  // Caller holds mu_ (or is single-threaded during Load).
  Status Persist() {
    json doc;
    doc["version"] = 1;
    doc["cluster_id"] = cluster_id_;
    doc["next_producer_id"] = next_producer_id_;
    doc["topics"] = json::array();
    for (const auto& [_, t] : topics_) {
      doc["topics"].push_back({{"name", t.name},
                               {"id", Hex(t.id)},
                               {"partitions", t.partitions},
                               {"replication_factor", t.replication_factor},
                               {"configs", t.configs},
                               {"internal", t.internal}});
    }
    return WriteJsonAtomic(dir_, kMetadataFile, doc);
  }

  // Caller holds remote_mu_.
  Status PersistRemoteLocked() {
    json partitions = json::object();
    for (const auto& [key, o] : remote_) {
      partitions[key] = {{"start", o.start}, {"end", o.end}, {"log_start", o.log_start}};
    }
    json doc{{"partitions", partitions}, {"pending_deletions", pending_deletions_}};
    return WriteJsonAtomic(dir_, kRemoteLogFile, doc);
  }

  Status LoadRemote() {
    auto path = dir_ / kRemoteLogFile;
    if (!std::filesystem::exists(path)) return Status::Ok();
    std::ifstream in(path);
    try {
      json doc = json::parse(in);
      for (const auto& [key, o] : doc.at("partitions").items()) {
        remote_[key] = RemoteLogOffsets{o.at("start").get<int64_t>(), o.at("end").get<int64_t>(),
                                        o.value("log_start", int64_t{-1})};
      }
      pending_deletions_ = doc.value("pending_deletions", std::set<std::string>{});
    } catch (const std::exception& e) {
      return MakeError(Errc::kCorrupt, "remote log file " + path.string() + ": " + e.what());
    }
    return Status::Ok();
  }

  void ForgetRemote(const TopicId& id) {
    std::lock_guard lock(remote_mu_);
    const std::string prefix = UuidToBase64(id) + ":";
    bool changed = false;
    for (auto it = remote_.lower_bound(prefix);
         it != remote_.end() && it->first.compare(0, prefix.size(), prefix) == 0;) {
      it = remote_.erase(it);
      changed = true;
    }
    if (changed) {
      Status st = PersistRemoteLocked();
      if (!st.ok()) log::Get("cluster")->warn("forgetting remote offsets: {}", st.error().message);
    }
  }

  std::filesystem::path dir_;
  mutable std::mutex mu_;
  std::string cluster_id_;
  int64_t next_producer_id_ = 0;
  std::map<std::string, TopicRecord> topics_;
  mutable std::mutex remote_mu_;  // guards remote_ and its file
  std::map<std::string, RemoteLogOffsets> remote_;
  std::set<std::string> pending_deletions_;
};

}  // namespace

Result<std::unique_ptr<MetadataStore>> OpenEmbeddedMetadataStore(const std::filesystem::path& dir) {
  auto store = std::make_unique<EmbeddedMetadataStore>(dir);
  STRATA_RETURN_IF_ERROR(store->Load());
  return std::unique_ptr<MetadataStore>(std::move(store));
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
