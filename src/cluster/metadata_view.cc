#include "cluster/metadata_view.h"

#include "base/log.h"
#include "cluster/log.h"

namespace strata::cluster {

namespace {

constexpr int64_t kPageKeys = 10000;
constexpr std::chrono::milliseconds kRetry{500};

}  // namespace

MetadataView::MetadataView(KvStore& kv, KeyLayout keys) : kv_(kv), keys_(std::move(keys)) {}

Result<std::unique_ptr<MetadataView>> MetadataView::Open(KvStore& kv, const KeyLayout& keys,
                                                         std::chrono::milliseconds load_timeout) {
  std::unique_ptr<MetadataView> view(new MetadataView(kv, keys));
  auto deadline = std::chrono::steady_clock::now() + load_timeout;
  while (true) {
    Status st = view->Load();
    if (st.ok()) break;
    if (st.error().code != Errc::kUnavailable || std::chrono::steady_clock::now() >= deadline) {
      return MakeError(st.error().code, "cannot load cluster metadata from " + kv.Describe() +
                                            ": " + st.error().message);
    }
    std::this_thread::sleep_for(kRetry);
  }
  view->thread_ = std::thread([v = view.get()] { v->Run(); });
  return view;
}

MetadataView::~MetadataView() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status MetadataView::Load() {
  auto started = std::chrono::steady_clock::now();
  std::vector<KeyValue> all;
  Revision at = 0;
  std::string from = keys_.prefix();
  const std::string end = PrefixEnd(keys_.prefix());
  while (true) {
    STRATA_ASSIGN_OR_RETURN(RangeResult page, kv_.Range(from, end, at, kPageKeys));
    if (at == 0) at = page.revision;
    if (!page.kvs.empty()) from = page.kvs.back().key + std::string(1, '\0');
    for (auto& kv : page.kvs) all.push_back(std::move(kv));
    if (!page.more) break;
  }
  auto read = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    raw_.clear();
    topics_.clear();
    partitions_.clear();
    brokers_.clear();
    controller_.reset();
    for (const KeyValue& kv : all) ApplyPutLocked(kv);
    revision_ = at;
    compacted_ = false;
  }
  applied_.notify_all();
  reloads_++;
  auto done = std::chrono::steady_clock::now();
  using Ms = std::chrono::milliseconds;
  MetadataLog()->info(
      "metadata loaded: {} keys at revision {} in {} ms (reading {} ms, decoding {} ms)",
      all.size(), at, std::chrono::duration_cast<Ms>(done - started).count(),
      std::chrono::duration_cast<Ms>(read - started).count(),
      std::chrono::duration_cast<Ms>(done - read).count());
  Notify({}, /*reloaded=*/true);
  return Status::Ok();
}

void MetadataView::Run() {
  while (true) {
    Revision from;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      from = revision_ + 1;
    }
    auto watch = kv_.Watch(keys_.prefix(), from, [this](const WatchBatch& b) { OnWatch(b); });
    if (watch.ok()) {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || compacted_; });
      if (stopping_) return;
      lock.unlock();
      watch->reset();
      MetadataLog()->warn("metadata watch fell behind a compaction at revision {}; loading again",
                          from);
    }
    // Load again until it works (etcd may be down); the old view is served meanwhile.
    bool logged = false;
    while (true) {
      Status st = Load();
      if (st.ok()) break;
      if (!logged)
        MetadataLog()->warn("loading cluster metadata failed: {}; retrying", st.error().message);
      logged = true;
      std::unique_lock lock(mu_);
      if (wake_.wait_for(lock, kRetry, [this] { return stopping_; })) return;
    }
  }
}

void MetadataView::OnWatch(const WatchBatch& batch) {
  std::vector<std::string> changed;
  {
    std::lock_guard lock(mu_);
    if (batch.compact_revision != 0) {
      compacted_ = true;
      wake_.notify_all();
      return;
    }
    for (const WatchEvent& ev : batch.events) {
      if (ev.kv.mod_revision <= revision_) continue;  // already in a load
      if (ev.type == WatchEvent::Type::kPut) {
        ApplyPutLocked(ev.kv);
      } else {
        ApplyDeleteLocked(ev.kv.key);
      }
      changed.push_back(ev.kv.key);
    }
    revision_ = std::max(revision_, batch.revision);
  }
  applied_.notify_all();
  if (!changed.empty()) Notify(changed, /*reloaded=*/false);
}

void MetadataView::ApplyPutLocked(const KeyValue& kv) {
  using K = ParsedKey::Kind;
  raw_[kv.key] = kv;
  ParsedKey key = keys_.Parse(kv.key);
  auto corrupt = [&](const Error& e) {
    corrupt_records_++;
    MetadataLog()->error("metadata record {} (revision {}) is unreadable and ignored: {}", kv.key,
                         kv.mod_revision, e.message);
  };
  switch (key.kind) {
    case K::kTopic: {
      auto t = DecodeTopic(kv.value);
      if (!t.ok() || t->name != key.name) {
        corrupt(t.ok() ? MakeError(Errc::kCorrupt, "name differs from the key") : t.error());
        topics_.erase(key.name);
        break;
      }
      topics_[key.name] = TopicEntry{std::move(*t), kv.mod_revision};
      break;
    }
    case K::kPartition: {
      auto p = DecodePartition(kv.value);
      if (!p.ok()) {
        corrupt(p.error());
        partitions_[key.name].erase(key.number);
        break;
      }
      partitions_[key.name][key.number] = PartitionEntry{std::move(*p), kv.mod_revision};
      break;
    }
    case K::kBroker: {
      auto b = DecodeBroker(kv.value);
      if (!b.ok()) {
        corrupt(b.error());
        brokers_.erase(key.number);
        break;
      }
      brokers_[key.number] =
          BrokerEntry{std::move(*b), BrokerEpoch(kv.create_revision), kv.lease, kv.mod_revision};
      break;
    }
    case K::kController: {
      try {
        controller_ = ControllerEntry{NodeId(std::stoi(kv.value)), kv.create_revision, kv.lease};
      } catch (const std::exception&) {
        corrupt(MakeError(Errc::kCorrupt, "controller value '" + kv.value + "' is not a node id"));
        controller_.reset();
      }
      break;
    }
    default:
      break;
  }
}

void MetadataView::ApplyDeleteLocked(const std::string& key_text) {
  using K = ParsedKey::Kind;
  raw_.erase(key_text);
  ParsedKey key = keys_.Parse(key_text);
  switch (key.kind) {
    case K::kTopic:
      topics_.erase(key.name);
      break;
    case K::kPartition: {
      auto it = partitions_.find(key.name);
      if (it != partitions_.end()) {
        it->second.erase(key.number);
        if (it->second.empty()) partitions_.erase(it);
      }
      break;
    }
    case K::kBroker:
      brokers_.erase(key.number);
      break;
    case K::kController:
      controller_.reset();
      break;
    default:
      break;
  }
}

void MetadataView::Notify(const std::vector<std::string>& keys, bool reloaded) {
  std::lock_guard lock(listeners_mu_);
  for (auto& [id, listener] : listeners_) listener(keys, reloaded);
}

int MetadataView::Subscribe(Listener listener) {
  std::lock_guard lock(listeners_mu_);
  int id = next_listener_++;
  listeners_[id] = std::move(listener);
  return id;
}

void MetadataView::Unsubscribe(int id) {
  std::lock_guard lock(listeners_mu_);
  listeners_.erase(id);
}

Revision MetadataView::revision() const {
  std::lock_guard lock(mu_);
  return revision_;
}

bool MetadataView::WaitForRevision(Revision rev, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return applied_.wait_for(lock, timeout, [&] { return revision_ >= rev; });
}

std::optional<TopicEntry> MetadataView::Topic(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = topics_.find(name);
  if (it == topics_.end()) return std::nullopt;
  return it->second;
}

std::vector<TopicEntry> MetadataView::Topics() const {
  std::lock_guard lock(mu_);
  std::vector<TopicEntry> out;
  out.reserve(topics_.size());
  for (const auto& [name, t] : topics_) out.push_back(t);
  return out;
}

std::map<int32_t, PartitionEntry> MetadataView::Partitions(const std::string& topic_id) const {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(topic_id);
  if (it == partitions_.end()) return {};
  return it->second;
}

std::optional<PartitionEntry> MetadataView::Partition(const std::string& topic_id,
                                                      int32_t partition) const {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(topic_id);
  if (it == partitions_.end()) return std::nullopt;
  auto p = it->second.find(partition);
  if (p == it->second.end()) return std::nullopt;
  return p->second;
}

std::vector<BrokerEntry> MetadataView::Brokers() const {
  std::lock_guard lock(mu_);
  std::vector<BrokerEntry> out;
  for (const auto& [id, b] : brokers_) out.push_back(b);
  return out;
}

std::optional<BrokerEntry> MetadataView::Broker(NodeId id) const {
  std::lock_guard lock(mu_);
  auto it = brokers_.find(id.value());
  if (it == brokers_.end()) return std::nullopt;
  return it->second;
}

std::optional<ControllerEntry> MetadataView::Controller() const {
  std::lock_guard lock(mu_);
  return controller_;
}

std::optional<KeyValue> MetadataView::Raw(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = raw_.find(key);
  if (it == raw_.end()) return std::nullopt;
  return it->second;
}

std::vector<KeyValue> MetadataView::RawPrefix(const std::string& prefix) const {
  std::lock_guard lock(mu_);
  std::vector<KeyValue> out;
  for (auto it = raw_.lower_bound(prefix);
       it != raw_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    out.push_back(it->second);
  }
  return out;
}

}  // namespace strata::cluster
