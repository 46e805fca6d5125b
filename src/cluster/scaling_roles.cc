#include "cluster/scaling_roles.h"

#include <charconv>
#include <sstream>

namespace strata::cluster {

namespace {

std::set<NodeId> ParseIds(const std::map<std::string, std::string>& configs, const char* key) {
  std::set<NodeId> out;
  auto it = configs.find(key);
  if (it == configs.end()) return out;
  std::stringstream in(it->second);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t first = item.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    const size_t last = item.find_last_not_of(' ');
    int32_t id = 0;
    const char* begin = item.data() + first;
    const char* end = item.data() + last + 1;
    auto [ptr, ec] = std::from_chars(begin, end, id);
    if (ec == std::errc() && ptr == end && id >= 0) out.insert(NodeId(id));
  }
  return out;
}

void WriteIds(std::map<std::string, std::string>& configs, const char* key,
              const std::set<NodeId>& ids) {
  if (ids.empty()) {
    configs.erase(key);
    return;
  }
  configs[key] = JoinIds(std::vector<NodeId>(ids.begin(), ids.end()));
}

}  // namespace

ScalingRoles ScalingRoles::FromConfigs(const std::map<std::string, std::string>& configs) {
  return {ParseIds(configs, kScalingActivatedKey), ParseIds(configs, kScalingDrainingKey),
          ParseIds(configs, kScalingRetiredKey)};
}

void ScalingRoles::ToConfigs(std::map<std::string, std::string>& configs) const {
  WriteIds(configs, kScalingActivatedKey, activated);
  WriteIds(configs, kScalingDrainingKey, draining);
  WriteIds(configs, kScalingRetiredKey, retired);
}

BrokerState ScalingRoles::Effective(const BrokerRegistration& r) const {
  if (r.state != BrokerState::kActive && r.state != BrokerState::kStandby) return r.state;
  if (draining.count(r.node_id) > 0) return BrokerState::kDraining;
  if (r.state == BrokerState::kStandby) {
    return activated.count(r.node_id) > 0 ? BrokerState::kActive : BrokerState::kStandby;
  }
  return retired.count(r.node_id) > 0 ? BrokerState::kStandby : BrokerState::kActive;
}

}  // namespace strata::cluster
