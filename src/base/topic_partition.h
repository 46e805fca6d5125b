#pragma once
// TopicPartition: the name of one partition (topic and index), the key every
// layer uses for per-partition state, so that no lookup takes a string some
// caller had to format ("topic-N") the same way as every other.
#include <compare>
#include <cstdint>
#include <functional>
#include <string>

namespace strata {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;

  bool operator==(const TopicPartition&) const = default;
  auto operator<=>(const TopicPartition&) const = default;
  // Kafka's directory and log name: "<topic>-<partition>".
  std::string ToString() const { return topic + "-" + std::to_string(partition); }
};

struct TopicPartitionHash {
  size_t operator()(const TopicPartition& tp) const {
    return std::hash<std::string>()(tp.topic) * 31 + std::hash<int32_t>()(tp.partition);
  }
};

}  // namespace strata
