#pragma once
// TopicPartition: the name of one partition, used as a map key everywhere.
#include <cstdint>
#include <functional>
#include <string>

namespace strata::broker {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;

  bool operator==(const TopicPartition&) const = default;
  std::string ToString() const { return topic + "-" + std::to_string(partition); }
};

struct TopicPartitionHash {
  size_t operator()(const TopicPartition& tp) const {
    return std::hash<std::string>()(tp.topic) * 31 + std::hash<int32_t>()(tp.partition);
  }
};

}  // namespace strata::broker
