#include "broker/partition_traffic.h"

namespace strata::broker {

namespace {

metrics::Counter& TopicCounter(const char* name, const char* help, const std::string& topic) {
  return metrics::Global().GetCounter(name, help, {{"topic", topic}});
}

void Add(std::atomic<int64_t>& c, int64_t n) { c.fetch_add(n, std::memory_order_relaxed); }

}  // namespace

PartitionTraffic::PartitionTraffic(const std::string& topic)
    : topic_bytes_in_(TopicCounter("strata_topic_bytes_in_total",
                                   "bytes of produce batches appended, by topic (Kafka's "
                                   "BrokerTopicMetrics BytesInPerSec)",
                                   topic)),
      topic_messages_in_(TopicCounter("strata_topic_messages_in_total",
                                      "records produced, by topic (MessagesInPerSec)", topic)),
      topic_bytes_out_(TopicCounter("strata_topic_bytes_out_total",
                                    "record bytes sent to consumers, by topic (BytesOutPerSec)",
                                    topic)),
      topic_replication_bytes_in_(
          TopicCounter("strata_topic_replication_bytes_in_total",
                       "record bytes appended from leaders as a follower, by topic "
                       "(ReplicationBytesInPerSec)",
                       topic)),
      topic_replication_bytes_out_(
          TopicCounter("strata_topic_replication_bytes_out_total",
                       "record bytes sent to followers as leader, by topic "
                       "(ReplicationBytesOutPerSec)",
                       topic)) {}

void PartitionTraffic::Produced(int64_t bytes, int64_t records) {
  Add(bytes_in_, bytes);
  Add(messages_in_, records);
  topic_bytes_in_.Add(bytes);
  topic_messages_in_.Add(records);
}

void PartitionTraffic::Consumed(int64_t bytes) {
  Add(bytes_out_, bytes);
  topic_bytes_out_.Add(bytes);
}

void PartitionTraffic::ReplicatedIn(int64_t bytes) {
  Add(replication_bytes_in_, bytes);
  topic_replication_bytes_in_.Add(bytes);
}

void PartitionTraffic::ReplicatedOut(int64_t bytes) {
  Add(replication_bytes_out_, bytes);
  topic_replication_bytes_out_.Add(bytes);
}

}  // namespace strata::broker
