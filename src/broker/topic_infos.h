#pragma once
// TopicInfos: the topics this broker knows from the metadata view, each with
// its storage settings resolved from the topic's overrides and the broker's
// configs, so the produce and fetch paths do not resolve configs per
// request. The replica reconciler publishes a topic's info whenever its
// record or the dynamic broker configs change, and forgets a deleted topic.
//
// Thread-safety: safe from any thread; a published TopicInfo is immutable.
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "cluster/metadata_store.h"
#include "config/broker_config.h"
#include "storage/log.h"

namespace strata::broker {

// A topic's record plus its resolved storage settings.
struct TopicInfo {
  cluster::TopicRecord record;
  storage::LogConfig log_config;
  int32_t min_insync_replicas = 1;

  // A tiered partition's replicas never copy what remote storage holds.
  bool tiered() const { return log_config.remote_storage_enable && !log_config.compacted; }
};

class TopicInfos {
 public:
  explicit TopicInfos(const config::BrokerConfig& config) : config_(config) {}

  // Resolves `record`'s settings with the broker's current configs and
  // publishes them; returns what was published.
  std::shared_ptr<const TopicInfo> Publish(const cluster::TopicRecord& record);
  // nullptr when the topic is not known.
  std::shared_ptr<const TopicInfo> Get(const std::string& name) const;
  void Forget(const std::string& name);
  // min.insync.replicas of the topic; 1 for a topic not known.
  int MinInsyncReplicas(const std::string& name) const {
    auto info = Get(name);
    return info ? info->min_insync_replicas : 1;
  }

 private:
  const config::BrokerConfig& config_;
  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const TopicInfo>> infos_;
};

}  // namespace strata::broker
