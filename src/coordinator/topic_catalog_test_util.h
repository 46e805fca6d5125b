#pragma once
// A TopicCatalog over a map the test owns and may change (topics created
// later, partitions added): the consumer-group tests' view of the cluster.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/consumer_group.h"

namespace strata::coordinator::testing {

using TopicMap = std::map<std::string, std::pair<TopicId, int32_t>>;  // name -> (id, partitions)

// `topics` must outlive the catalog.
inline TopicCatalog MapCatalog(const TopicMap& topics) {
  const TopicMap* t = &topics;
  return {[t](const std::string& name) -> std::optional<std::pair<TopicId, int32_t>> {
            auto it = t->find(name);
            if (it == t->end()) return std::nullopt;
            return it->second;
          },
          [t](const TopicId& id) -> std::optional<std::string> {
            for (const auto& [name, topic] : *t) {
              if (topic.first == id) return name;
            }
            return std::nullopt;
          },
          [t] {
            std::vector<std::string> names;
            for (const auto& [name, topic] : *t) names.push_back(name);
            return names;
          }};
}

}  // namespace strata::coordinator::testing
