#pragma once
// For tests: the BrokerContext handlers take, over a TopicManager and a real
// embedded metadata store (broker::testing::InProcessTopics), without a
// network, a controller or a group coordinator.
#include <memory>
#include <string>

#include "broker/append_notifier.h"
#include "broker/in_process_topics.h"
#include "kafka/broker_context.h"
#include "kafka/producer_id_allocator.h"

namespace strata::kafka::testing {

class InProcessBroker {
 public:
  InProcessBroker()
      : producer_ids_(std::make_unique<ProducerIdAllocator>(topics_.metadata())),
        context_(std::make_unique<BrokerContext>(BrokerContext{topics_.config(), topics_.metadata(),
                                                               topics_.topics(), notifier_,
                                                               *producer_ids_, Clock::Real()})) {
    context_->metadata = &topics_.metadata();
    for (const auto& l : topics_.config().advertised_listeners()) {
      context_->advertised.push_back({l.listener_name, l.host, l.port});
    }
    topics_.topics().SetWakeListener([this](const TopicPartition& tp) { notifier_.Notify(tp); });
  }
  InProcessBroker(const InProcessBroker&) = delete;
  InProcessBroker& operator=(const InProcessBroker&) = delete;

  // A topic placed by `replicas` (one list per partition; broker 1 leads
  // where it comes first). Returns the partitions' create revision.
  int64_t MakeTopic(const std::string& name, const cluster::ReplicaAssignment& replicas) {
    return topics_.MakeTopic(name, replicas);
  }

  cluster::Metadata& metadata() { return topics_.metadata(); }
  broker::TopicManager& topics() { return topics_.topics(); }
  BrokerContext& context() { return *context_; }

 private:
  broker::AppendNotifier notifier_;          // outlives the partitions that wake it
  broker::testing::InProcessTopics topics_;  // destroyed after the context
  std::unique_ptr<ProducerIdAllocator> producer_ids_;
  std::unique_ptr<BrokerContext> context_;
};

}  // namespace strata::kafka::testing
