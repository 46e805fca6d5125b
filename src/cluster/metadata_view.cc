#include "cluster/metadata_view.h"

#include <deque>

#include "base/log.h"
#include "cluster/logger.h"

namespace strata::cluster {

namespace {

constexpr int64_t kPageKeys = 10000;
// Pages read ahead of decoding: bounds memory while the decoder is slower.
constexpr size_t kPagesAhead = 4;
constexpr std::chrono::milliseconds kRetry{500};

// The sections of the prefix that may hold a million keys: partition and
// remote log records, topics.
std::vector<std::string> LargeSections(const KeyLayout& keys) {
  return {keys.PartitionsPrefix(), keys.RemoteLogPrefix(), keys.TopicsPrefix()};
}

// [from, end) cut at the first character of the section's next component
// (and ranges that would end before `from` dropped).
std::vector<std::pair<std::string, std::string>> CutRanges(const std::string& section,
                                                           const std::string& from) {
  static constexpr std::string_view kCuts =
      "-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";  // ASCII order
  std::vector<std::pair<std::string, std::string>> out;
  std::string cut_from = from;
  for (char c : kCuts) {
    std::string cut = section + c;
    if (cut <= cut_from) continue;
    out.emplace_back(cut_from, cut);
    cut_from = cut;
  }
  out.emplace_back(cut_from, PrefixEnd(section));
  return out;
}

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

Status MetadataView::ReadAll(const std::function<void(std::vector<KeyValue>)>& page, Revision& at,
                             size_t& keys) {
  at = 0;
  keys = 0;
  // Pages through [from, end); false (with `from` at the next key) when a
  // large section has more than one page.
  auto read = [&](std::string& from, const std::string& end, bool stop_after_one) -> Result<bool> {
    while (true) {
      STRATA_ASSIGN_OR_RETURN(RangeResult got, kv_.Range(from, end, at, kPageKeys));
      if (at == 0) at = got.revision;
      if (!got.kvs.empty()) from = got.kvs.back().key + std::string(1, '\0');
      keys += got.kvs.size();
      bool more = got.more;
      if (!got.kvs.empty()) page(std::move(got.kvs));
      if (!more) return true;
      if (stop_after_one) return false;
    }
  };
  // etcd 3.4 answers a limited Range by collecting every revision in the
  // whole range first, so paging through one huge range takes quadratic
  // time (12 s at a million keys). A section larger than a page is read in
  // 65 smaller ranges instead, keeping every page cheap; a small store still
  // takes a handful of requests.
  std::string from = keys_.prefix();
  for (const std::string& section : LargeSections(keys_)) {
    STRATA_RETURN_IF_ERROR(read(from, section, false));  // what lies before it
    from = section;
    STRATA_ASSIGN_OR_RETURN(bool one_page, read(from, PrefixEnd(section), true));
    if (!one_page) {
      for (auto [cut_from, cut_end] : CutRanges(section, from))
        STRATA_RETURN_IF_ERROR(read(cut_from, cut_end, false));
    }
    from = PrefixEnd(section);
  }
  STRATA_RETURN_IF_ERROR(read(from, PrefixEnd(keys_.prefix()), false));
  return Status::Ok();
}

Status MetadataView::Load() {
  auto started = std::chrono::steady_clock::now();
  // etcd reads the next page while this thread decodes the last one: at a
  // million partitions both take seconds, and they overlap on two cores.
  std::mutex pages_mu;
  std::condition_variable pages_cv;
  std::deque<std::vector<KeyValue>> pages;
  bool read_done = false;
  Status read_status = Status::Ok();
  Revision at = 0;
  size_t keys = 0;
  std::thread reader([&] {
    Status st = ReadAll(
        [&](std::vector<KeyValue> kvs) {
          std::unique_lock lock(pages_mu);
          pages_cv.wait(lock, [&] { return pages.size() < kPagesAhead; });
          pages.push_back(std::move(kvs));
          pages_cv.notify_all();
        },
        at, keys);
    std::lock_guard lock(pages_mu);
    read_status = std::move(st);
    read_done = true;
    pages_cv.notify_all();
  });
  State loaded;
  auto decoding = std::chrono::steady_clock::duration::zero();
  for (;;) {
    std::vector<KeyValue> kvs;
    {
      std::unique_lock lock(pages_mu);
      pages_cv.wait(lock, [&] { return read_done || !pages.empty(); });
      if (pages.empty()) break;
      kvs = std::move(pages.front());
      pages.pop_front();
      pages_cv.notify_all();
    }
    auto t0 = std::chrono::steady_clock::now();
    for (const KeyValue& kv : kvs) ApplyPut(loaded, kv);
    decoding += std::chrono::steady_clock::now() - t0;
  }
  reader.join();
  STRATA_RETURN_IF_ERROR(read_status);
  State old;  // destroyed after the lock is released: a million nodes take a while
  {
    std::lock_guard lock(mu_);
    old = std::exchange(state_, std::move(loaded));
    revision_ = at;
    compacted_ = false;
  }
  applied_.notify_all();
  reloads_++;
  auto done = std::chrono::steady_clock::now();
  using Ms = std::chrono::milliseconds;
  MetadataLog()->info(
      "metadata loaded: {} keys at revision {} in {} ms (decoding {} ms of it, while reading)",
      keys, at, std::chrono::duration_cast<Ms>(done - started).count(),
      std::chrono::duration_cast<Ms>(decoding).count());
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
        ApplyPut(state_, ev.kv);
      } else {
        ApplyDelete(state_, ev.kv.key);
      }
      changed.push_back(ev.kv.key);
    }
    revision_ = std::max(revision_, batch.revision);
  }
  applied_.notify_all();
  if (!changed.empty()) Notify(changed, /*reloaded=*/false);
}

void MetadataView::ApplyPut(State& state, const KeyValue& kv) {
  using K = ParsedKey::Kind;
  ParsedKey key = keys_.Parse(kv.key);
  if (key.kind != K::kPartition) state.raw[kv.key] = kv;
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
        state.topics.erase(key.name);
        break;
      }
      state.topics[key.name] = TopicEntry{std::move(*t), kv.mod_revision};
      break;
    }
    case K::kPartition: {
      auto p = DecodePartition(kv.value);
      if (!p.ok()) {
        corrupt(p.error());
        state.partitions[key.name].erase(key.number);
        break;
      }
      state.partitions[key.name][key.number] =
          PartitionEntry{std::move(*p), kv.mod_revision, kv.create_revision};
      break;
    }
    case K::kBroker: {
      auto b = DecodeBroker(kv.value);
      if (!b.ok()) {
        corrupt(b.error());
        state.brokers.erase(key.number);
        break;
      }
      state.brokers[key.number] =
          BrokerEntry{std::move(*b), BrokerEpoch(kv.create_revision), kv.lease, kv.mod_revision};
      break;
    }
    case K::kController: {
      try {
        state.controller =
            ControllerEntry{NodeId(std::stoi(kv.value)), kv.create_revision, kv.lease};
      } catch (const std::exception&) {
        corrupt(MakeError(Errc::kCorrupt, "controller value '" + kv.value + "' is not a node id"));
        state.controller.reset();
      }
      break;
    }
    default:
      break;
  }
}

void MetadataView::ApplyDelete(State& state, const std::string& key_text) {
  using K = ParsedKey::Kind;
  state.raw.erase(key_text);
  ParsedKey key = keys_.Parse(key_text);
  switch (key.kind) {
    case K::kTopic:
      state.topics.erase(key.name);
      break;
    case K::kPartition: {
      auto it = state.partitions.find(key.name);
      if (it != state.partitions.end()) {
        it->second.erase(key.number);
        if (it->second.empty()) state.partitions.erase(it);
      }
      break;
    }
    case K::kBroker:
      state.brokers.erase(key.number);
      break;
    case K::kController:
      state.controller.reset();
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
  auto it = state_.topics.find(name);
  if (it == state_.topics.end()) return std::nullopt;
  return it->second;
}

std::vector<TopicEntry> MetadataView::Topics() const {
  std::lock_guard lock(mu_);
  std::vector<TopicEntry> out;
  out.reserve(state_.topics.size());
  for (const auto& [name, t] : state_.topics) out.push_back(t);
  return out;
}

std::map<int32_t, PartitionEntry> MetadataView::Partitions(const std::string& topic_id) const {
  std::lock_guard lock(mu_);
  auto it = state_.partitions.find(topic_id);
  if (it == state_.partitions.end()) return {};
  return it->second;
}

std::optional<PartitionEntry> MetadataView::Partition(const std::string& topic_id,
                                                      int32_t partition) const {
  std::lock_guard lock(mu_);
  auto it = state_.partitions.find(topic_id);
  if (it == state_.partitions.end()) return std::nullopt;
  auto p = it->second.find(partition);
  if (p == it->second.end()) return std::nullopt;
  return p->second;
}

std::vector<std::string> MetadataView::PartitionTopicIds() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [id, partitions] : state_.partitions) out.push_back(id);
  return out;
}

std::vector<BrokerEntry> MetadataView::Brokers() const {
  std::lock_guard lock(mu_);
  std::vector<BrokerEntry> out;
  for (const auto& [id, b] : state_.brokers) out.push_back(b);
  return out;
}

std::set<NodeId> MetadataView::BrokersEligibleForLeadership() const {
  std::lock_guard lock(mu_);
  std::set<NodeId> out;
  for (const auto& [id, b] : state_.brokers) {
    if (EligibleForLeadership(b.registration.state)) out.insert(b.registration.node_id);
  }
  return out;
}

std::optional<BrokerEntry> MetadataView::Broker(NodeId id) const {
  std::lock_guard lock(mu_);
  auto it = state_.brokers.find(id.value());
  if (it == state_.brokers.end()) return std::nullopt;
  return it->second;
}

std::optional<ControllerEntry> MetadataView::Controller() const {
  std::lock_guard lock(mu_);
  return state_.controller;
}

std::optional<KeyValue> MetadataView::Raw(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = state_.raw.find(key);
  if (it == state_.raw.end()) return std::nullopt;
  return it->second;
}

std::vector<KeyValue> MetadataView::RawPrefix(const std::string& prefix) const {
  std::lock_guard lock(mu_);
  std::vector<KeyValue> out;
  for (auto it = state_.raw.lower_bound(prefix);
       it != state_.raw.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    out.push_back(it->second);
  }
  return out;
}

}  // namespace strata::cluster
