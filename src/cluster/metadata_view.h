#pragma once
// MetadataView: this broker's in-memory copy of cluster metadata, fed by one
// watch on the whole prefix. Handlers read it (never the store) so a request
// never waits on etcd; writers wait on it (WaitForRevision) so they read
// their own writes. It loads with paged reads at one revision, then applies
// the watch's changes in revision order; when the watch falls behind a
// compaction it loads again. A record that does not decode is logged once,
// counted and left out; everything else is served.
//
// Thread-safety: readers from any thread; one thread of its own applies
// changes and runs the listeners (and, while loading, a second one reads).
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster/keys.h"
#include "cluster/kv_store.h"
#include "cluster/records.h"

namespace strata::cluster {

struct TopicEntry {
  TopicRecord record;
  Revision mod_revision = 0;
};
struct PartitionEntry {
  PartitionRecord record;
  Revision mod_revision = 0;
  Revision create_revision = 0;  // when the partition (its record) was made
};
struct BrokerEntry {
  BrokerRegistration registration;
  BrokerEpoch epoch{0};  // the registration key's create revision
  LeaseId lease = 0;
  Revision mod_revision = 0;
};
struct ControllerEntry {
  NodeId node{-1};
  Revision election_revision = 0;  // the controller key's create revision
  LeaseId lease = 0;
};

class MetadataView {
 public:
  // Loads the current state (retrying until `load_timeout`), then follows it.
  static Result<std::unique_ptr<MetadataView>> Open(KvStore& kv, const KeyLayout& keys,
                                                    std::chrono::milliseconds load_timeout);
  ~MetadataView();

  Revision revision() const;
  // Waits until changes up to `rev` are applied; false on timeout.
  bool WaitForRevision(Revision rev, std::chrono::milliseconds timeout) const;

  std::optional<TopicEntry> Topic(const std::string& name) const;
  std::vector<TopicEntry> Topics() const;
  // Partitions of a topic (by its base64 id), by index.
  std::map<int32_t, PartitionEntry> Partitions(const std::string& topic_id) const;
  // The topic ids that have partition records (with a topic record or not).
  std::vector<std::string> PartitionTopicIds() const;
  std::optional<PartitionEntry> Partition(const std::string& topic_id, int32_t partition) const;
  std::vector<BrokerEntry> Brokers() const;
  std::optional<BrokerEntry> Broker(NodeId id) const;
  // The registered brokers that may lead or join an ISR: not fenced, not in
  // controlled shutdown (EligibleForLeadership).
  std::set<NodeId> BrokersEligibleForLeadership() const;
  std::optional<ControllerEntry> Controller() const;
  // Any key as stored (cluster id, remote log offsets, configs, ...), except
  // partition records (a million of them at scale: Partition() has them).
  std::optional<KeyValue> Raw(const std::string& key) const;
  std::vector<KeyValue> RawPrefix(const std::string& prefix) const;

  // Runs after every applied change (and after a reload, with `reloaded`),
  // on the view's thread, with the keys that changed. Returns an id for
  // Unsubscribe. A listener must not block for long or call Unsubscribe.
  using Listener = std::function<void(const std::vector<std::string>& keys, bool reloaded)>;
  int Subscribe(Listener listener);
  void Unsubscribe(int id);

  int64_t corrupt_records() const { return corrupt_records_.load(); }
  int64_t reloads() const { return reloads_.load(); }

 private:
  // Everything the view serves, at one revision.
  struct State {
    std::map<std::string, KeyValue> raw;
    std::map<std::string, TopicEntry> topics;
    std::map<std::string, std::map<int32_t, PartitionEntry>> partitions;
    std::map<int32_t, BrokerEntry> brokers;
    std::optional<ControllerEntry> controller;
  };

  MetadataView(KvStore& kv, KeyLayout keys);
  Status Load();
  // Pages of the whole prefix at one revision (the first page's), handed to
  // `page` as they arrive.
  Status ReadAll(const std::function<void(std::vector<KeyValue>)>& page, Revision& at,
                 size_t& keys);
  void Run();
  void OnWatch(const WatchBatch& batch);
  void ApplyPut(State& state, const KeyValue& kv);
  void ApplyDelete(State& state, const std::string& key);
  void Notify(const std::vector<std::string>& keys, bool reloaded);

  KvStore& kv_;
  const KeyLayout keys_;
  mutable std::mutex mu_;
  mutable std::condition_variable applied_;
  Revision revision_ = 0;
  State state_;
  std::atomic<int64_t> corrupt_records_{0};
  std::atomic<int64_t> reloads_{0};
  bool compacted_ = false;  // the watch ended: load again
  bool stopping_ = false;
  std::condition_variable wake_;
  std::mutex listeners_mu_;
  std::map<int, Listener> listeners_;
  int next_listener_ = 1;
  std::thread thread_;
};

}  // namespace strata::cluster
