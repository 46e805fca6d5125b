#include "balancer/service/balancer_throttle.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "balancer/service/logger.h"

namespace strata::balancer {

namespace {

constexpr const char* kLeaderRate = "leader.replication.throttled.rate";
constexpr const char* kFollowerRate = "follower.replication.throttled.rate";
constexpr const char* kLeaderReplicas = "leader.replication.throttled.replicas";
constexpr const char* kFollowerReplicas = "follower.replication.throttled.replicas";

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string JoinList(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

}  // namespace

Status BalancerThrottle::Set(const std::vector<balancer::Move>& moves, int64_t bytes_per_sec) {
  std::set<cluster::NodeId> brokers;
  // topic -> key -> entries
  std::map<std::string, std::map<std::string, std::vector<std::string>>> entries;
  for (const auto& m : moves) {
    for (cluster::NodeId id : m.replicas_before) {
      brokers.insert(id);
      entries[m.topic][kLeaderReplicas].push_back(fmt::format("{}:{}", m.partition, id));
    }
    for (cluster::NodeId id : m.replicas_after) {
      brokers.insert(id);
      if (std::find(m.replicas_before.begin(), m.replicas_before.end(), id) ==
          m.replicas_before.end()) {
        entries[m.topic][kFollowerReplicas].push_back(fmt::format("{}:{}", m.partition, id));
      }
    }
  }
  const std::string rate = std::to_string(bytes_per_sec);
  for (cluster::NodeId id : brokers) {
    const std::string entity = std::to_string(id.value());
    std::vector<Added> added;
    STRATA_RETURN_IF_ERROR(
        metadata_.UpdateBrokerConfigs(entity, [&](std::map<std::string, std::string>& c) {
          added.clear();
          for (const char* key : {kLeaderRate, kFollowerRate}) {
            if (c.count(key) > 0) continue;  // the operator's rate holds
            c[key] = rate;
            added.push_back({true, entity, key, rate});
          }
          return Status::Ok();
        }));
    added_.insert(added_.end(), added.begin(), added.end());
  }
  for (const auto& [topic, keys] : entries) {
    std::vector<Added> added;
    STRATA_RETURN_IF_ERROR(
        metadata_.UpdateTopicConfigs(topic, [&](std::map<std::string, std::string>& c) {
          added.clear();
          for (const auto& [key, wanted] : keys) {
            auto it = c.find(key);
            if (it != c.end() && it->second == "*") continue;  // every replica already
            std::vector<std::string> list = SplitList(it == c.end() ? "" : it->second);
            for (const auto& e : wanted) {
              if (std::find(list.begin(), list.end(), e) != list.end()) continue;
              list.push_back(e);
              added.push_back({false, topic, key, e});
            }
            c[key] = JoinList(list);
          }
          return Status::Ok();
        }));
    added_.insert(added_.end(), added.begin(), added.end());
  }
  return Status::Ok();
}

Status BalancerThrottle::Clear() {
  std::map<std::pair<bool, std::string>, std::vector<Added>> by_entity;
  for (const auto& a : added_) by_entity[{a.broker, a.entity}].push_back(a);
  Status result = Status::Ok();
  for (const auto& [where, items] : by_entity) {
    auto take_off = [&items](std::map<std::string, std::string>& c) {
      for (const Added& a : items) {
        auto it = c.find(a.key);
        if (it == c.end()) continue;
        if (a.broker) {
          if (it->second == a.value) c.erase(it);  // unless changed since
          continue;
        }
        std::vector<std::string> list = SplitList(it->second);
        list.erase(std::remove(list.begin(), list.end(), a.value), list.end());
        if (list.empty()) {
          c.erase(it);
        } else {
          it->second = JoinList(list);
        }
      }
      return Status::Ok();
    };
    Status st = where.first ? metadata_.UpdateBrokerConfigs(where.second, take_off)
                            : metadata_.UpdateTopicConfigs(where.second, take_off);
    if (!st.ok()) {
      Log()->warn("balancer: taking the replication throttle off {} {}: {}",
                  where.first ? "broker" : "topic", where.second, st.error().message);
      result = st;
    }
  }
  added_.clear();
  return result;
}

}  // namespace strata::balancer
