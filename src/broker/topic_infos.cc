#include "broker/topic_infos.h"

#include "broker/topic_validation.h"

namespace strata::broker {

std::shared_ptr<const TopicInfo> TopicInfos::Publish(const cluster::TopicRecord& record) {
  auto info = std::make_shared<TopicInfo>();
  info->record = record;
  info->log_config = ResolveLogConfig(config_, record.configs);
  info->min_insync_replicas = static_cast<int32_t>(config::ToLong(EffectiveTopicConfig(
      config_, record.configs, *config::FindTopicConfig("min.insync.replicas"))));
  std::unique_lock lock(mu_);
  infos_[record.name] = info;
  return info;
}

std::shared_ptr<const TopicInfo> TopicInfos::Get(const std::string& name) const {
  std::shared_lock lock(mu_);
  auto it = infos_.find(name);
  return it == infos_.end() ? nullptr : it->second;
}

void TopicInfos::Forget(const std::string& name) {
  std::unique_lock lock(mu_);
  infos_.erase(name);
}

}  // namespace strata::broker
