#pragma once
// For tests: a TopicManager over a real embedded metadata store in a fresh
// directory (removed at the end), without a network, a controller or a group
// coordinator. Broker 1 of a one-broker cluster; topics are made straight in
// the store.
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/clock.h"
#include "broker/topic_manager.h"
#include "cluster/metadata.h"
#include "config/broker_config.h"

namespace strata::broker::testing {

class InProcessTopics {
 public:
  InProcessTopics() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "strata-broker-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    cluster::MetadataOptions options;
    options.dir = dir_ / "strata-metadata";
    options.local_node = cluster::NodeId(1);
    metadata_ = cluster::Metadata::Open(options).value();
    config::Properties props{{"node.id", "1"}, {"log.dirs", (dir_ / "logs").string()}};
    std::vector<std::string> unknown;
    config_ = std::make_unique<config::BrokerConfig>(
        config::BrokerConfig::FromProperties(props, &unknown));
    topics_ = std::make_unique<TopicManager>(*config_, *metadata_, Clock::Real());
  }
  ~InProcessTopics() {
    topics_->Shutdown();
    topics_.reset();
    metadata_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  InProcessTopics(const InProcessTopics&) = delete;
  InProcessTopics& operator=(const InProcessTopics&) = delete;

  // A topic placed by `replicas` (one list per partition; broker 1 leads
  // where it comes first). Returns the partitions' create revision.
  int64_t MakeTopic(const std::string& name, const cluster::ReplicaAssignment& replicas) {
    cluster::TopicRecord t;
    t.name = name;
    t.partitions = static_cast<int32_t>(replicas.size());
    t.replication_factor = static_cast<int16_t>(replicas.front().size());
    auto made = metadata_->CreateTopic(t, replicas).value();
    return metadata_->view()
        .Partitions(cluster::UuidToBase64(made.id))
        .begin()
        ->second.create_revision;
  }

  const config::BrokerConfig& config() const { return *config_; }
  cluster::Metadata& metadata() { return *metadata_; }
  TopicManager& topics() { return *topics_; }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<cluster::Metadata> metadata_;
  std::unique_ptr<config::BrokerConfig> config_;
  std::unique_ptr<TopicManager> topics_;
};

}  // namespace strata::broker::testing
