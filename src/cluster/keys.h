#pragma once
// KeyLayout: where each metadata record lives in the key-value store, under
// one prefix (strata.etcd.prefix), so several clusters can share an etcd.
// docs/metadata.md documents the layout; this is its only implementation.
#include <cstdint>
#include <optional>
#include <string>

#include "cluster/types.h"

namespace strata::cluster {

// What a key under the prefix is.
struct ParsedKey {
  enum class Kind {
    kClusterId,
    kController,
    kBroker,
    kKnownBroker,
    kTopic,
    kPartition,
    kRemoteLog,
    kPendingDeletion,
    kDeletedTopic,
    kProducerIds,
    kBrokerConfig,
    kOther,
  };
  Kind kind = Kind::kOther;
  std::string name;     // topic name, topic id (base64), or remote dir
  int32_t number = -1;  // node id or partition
};

class KeyLayout {
 public:
  explicit KeyLayout(std::string prefix);

  const std::string& prefix() const { return prefix_; }  // ends with '/'
  std::string ClusterId() const { return prefix_ + "cluster_id"; }
  std::string Controller() const { return prefix_ + "controller"; }
  std::string ProducerIds() const { return prefix_ + "producer_ids"; }
  std::string BrokersPrefix() const { return prefix_ + "brokers/"; }
  std::string Broker(NodeId id) const { return BrokersPrefix() + std::to_string(id.value()); }
  // The last registration of every broker that ever registered, kept
  // without a lease: a broker that has one and no live registration is
  // fenced (DescribeCluster's IncludeFencedBrokers).
  std::string KnownBrokersPrefix() const { return prefix_ + "known_brokers/"; }
  std::string KnownBroker(NodeId id) const {
    return KnownBrokersPrefix() + std::to_string(id.value());
  }
  // Dynamic broker configs: node id, or "default" (--entity-default).
  std::string BrokerConfig(const std::string& entity) const {
    return prefix_ + "configs/brokers/" + entity;
  }
  std::string TopicsPrefix() const { return prefix_ + "topics/"; }
  std::string Topic(const std::string& name) const { return TopicsPrefix() + name; }
  std::string PartitionsPrefix() const { return prefix_ + "partitions/"; }
  std::string TopicPartitions(const std::string& topic_id) const {
    return PartitionsPrefix() + topic_id + "/";
  }
  std::string Partition(const std::string& topic_id, int32_t p) const {
    return TopicPartitions(topic_id) + std::to_string(p);
  }
  std::string RemoteLogPrefix() const { return prefix_ + "remote_log/"; }
  std::string TopicRemoteLogs(const std::string& topic_id) const {
    return RemoteLogPrefix() + topic_id + "/";
  }
  std::string RemoteLog(const std::string& topic_id, int32_t p) const {
    return TopicRemoteLogs(topic_id) + std::to_string(p);
  }
  std::string PendingDeletionsPrefix() const { return prefix_ + "pending_remote_deletions/"; }
  // The remote dir is escaped so that it is one path component.
  std::string PendingDeletion(const std::string& remote_dir) const;
  // A deleted tiered topic whose remote data the controller still has to
  // delete, by topic id (base64).
  std::string DeletedTopicsPrefix() const { return prefix_ + "deleted_topics/"; }
  std::string DeletedTopic(const std::string& topic_id) const {
    return DeletedTopicsPrefix() + topic_id;
  }

  // A user's SCRAM credentials (cluster/scram_credentials.h), by user name.
  std::string ScramCredentialsPrefix() const { return prefix_ + "scram_credentials/"; }
  std::string ScramCredentials(const std::string& user) const {
    return ScramCredentialsPrefix() + user;
  }

  // The ACLs of one resource pattern (cluster/acl_records.h).
  std::string AclsPrefix() const { return prefix_ + "acls/"; }
  std::string Acls(int resource_type, int pattern_type, const std::string& name) const {
    return AclsPrefix() + std::to_string(resource_type) + "/" + std::to_string(pattern_type) + "/" +
           name;
  }

  // The client quotas of one entity (cluster/client_quota_records.h).
  std::string ClientQuotasPrefix() const { return prefix_ + "client_quotas/"; }
  std::string ClientQuotas(const std::string& entity_key) const {
    return ClientQuotasPrefix() + entity_key;
  }

  ParsedKey Parse(const std::string& key) const;

 private:
  std::string prefix_;
};

}  // namespace strata::cluster
