// KeyLayout: every key it builds parses back to the same kind, name and
// number; keys outside the prefix, or malformed under it, parse as kOther.
#include "cluster/keys.h"

#include <gtest/gtest.h>

#include <vector>

namespace strata::cluster {
namespace {

using K = ParsedKey::Kind;

void ExpectParsed(const KeyLayout& keys, const std::string& key, K kind, const std::string& name,
                  int32_t number) {
  ParsedKey p = keys.Parse(key);
  EXPECT_EQ(p.kind, kind) << key;
  EXPECT_EQ(p.name, name) << key;
  EXPECT_EQ(p.number, number) << key;
}

void ExpectOther(const KeyLayout& keys, const std::string& key) {
  ExpectParsed(keys, key, K::kOther, "", -1);
}

TEST(KeyLayout, PrefixGetsOneTrailingSlash) {
  EXPECT_EQ(KeyLayout("/strata").prefix(), "/strata/");
  EXPECT_EQ(KeyLayout("/strata/").prefix(), "/strata/");
  EXPECT_EQ(KeyLayout("").prefix(), "/");
  EXPECT_EQ(KeyLayout("/a/b").prefix(), "/a/b/");
}

TEST(KeyLayout, BuildsTheDocumentedKeys) {
  KeyLayout keys("/strata");
  const std::string id = "AAECAwQFBgcICQoLDA0ODw";
  EXPECT_EQ(keys.ClusterId(), "/strata/cluster_id");
  EXPECT_EQ(keys.Controller(), "/strata/controller");
  EXPECT_EQ(keys.ProducerIds(), "/strata/producer_ids");
  EXPECT_EQ(keys.BrokersPrefix(), "/strata/brokers/");
  EXPECT_EQ(keys.Broker(NodeId(7)), "/strata/brokers/7");
  EXPECT_EQ(keys.BrokerConfig("3"), "/strata/configs/brokers/3");
  EXPECT_EQ(keys.BrokerConfig("default"), "/strata/configs/brokers/default");
  EXPECT_EQ(keys.TopicsPrefix(), "/strata/topics/");
  EXPECT_EQ(keys.Topic("orders"), "/strata/topics/orders");
  EXPECT_EQ(keys.PartitionsPrefix(), "/strata/partitions/");
  EXPECT_EQ(keys.TopicPartitions(id), "/strata/partitions/" + id + "/");
  EXPECT_EQ(keys.Partition(id, 12), "/strata/partitions/" + id + "/12");
  EXPECT_EQ(keys.RemoteLogPrefix(), "/strata/remote_log/");
  EXPECT_EQ(keys.TopicRemoteLogs(id), "/strata/remote_log/" + id + "/");
  EXPECT_EQ(keys.RemoteLog(id, 0), "/strata/remote_log/" + id + "/0");
  EXPECT_EQ(keys.PendingDeletionsPrefix(), "/strata/pending_remote_deletions/");
  EXPECT_EQ(keys.PendingDeletion("/data/t-0"), "/strata/pending_remote_deletions/%2Fdata%2Ft-0");
  EXPECT_EQ(keys.DeletedTopicsPrefix(), "/strata/deleted_topics/");
  EXPECT_EQ(keys.DeletedTopic(id), "/strata/deleted_topics/" + id);
}

TEST(KeyLayout, EveryKeyKindParsesBack) {
  for (const char* prefix : {"/strata", "/", "/cluster-a/strata/"}) {
    SCOPED_TRACE(prefix);
    KeyLayout keys(prefix);
    const std::string id = "AAECAwQFBgcICQoLDA0ODw";
    ExpectParsed(keys, keys.ClusterId(), K::kClusterId, "", -1);
    ExpectParsed(keys, keys.Controller(), K::kController, "", -1);
    ExpectParsed(keys, keys.ProducerIds(), K::kProducerIds, "", -1);
    ExpectParsed(keys, keys.Broker(NodeId(0)), K::kBroker, "", 0);
    ExpectParsed(keys, keys.Broker(NodeId(2147483647)), K::kBroker, "", 2147483647);
    ExpectParsed(keys, keys.KnownBroker(NodeId(7)), K::kKnownBroker, "", 7);
    ExpectParsed(keys, keys.BrokerConfig("5"), K::kBrokerConfig, "5", -1);
    ExpectParsed(keys, keys.BrokerConfig("default"), K::kBrokerConfig, "default", -1);
    ExpectParsed(keys, keys.Topic("orders.v2_x-y"), K::kTopic, "orders.v2_x-y", -1);
    ExpectParsed(keys, keys.Partition(id, 0), K::kPartition, id, 0);
    ExpectParsed(keys, keys.Partition(id, 999999), K::kPartition, id, 999999);
    ExpectParsed(keys, keys.RemoteLog(id, 41), K::kRemoteLog, id, 41);
    ExpectParsed(keys, keys.DeletedTopic(id), K::kDeletedTopic, id, -1);
  }
}

// A remote dir is one key component: '/' and '%' are escaped and come back.
TEST(KeyLayout, PendingDeletionEscapesAndRoundTrips) {
  KeyLayout keys("/strata");
  for (const std::string dir :
       {"hdfs://nn:8020/strata/orders-3", "/a%2Fb/c%25", "%", "%%2F/", "plain", ""}) {
    std::string key = keys.PendingDeletion(dir);
    std::string component = key.substr(keys.PendingDeletionsPrefix().size());
    EXPECT_EQ(component.find('/'), std::string::npos) << key;
    ExpectParsed(keys, key, K::kPendingDeletion, dir, -1);
  }
  EXPECT_EQ(keys.PendingDeletion("a/%b"), "/strata/pending_remote_deletions/a%2F%25b");
}

TEST(KeyLayout, KeysOfAnotherPrefixAreForeign) {
  KeyLayout keys("/strata");
  KeyLayout other("/strata2");
  ExpectOther(keys, other.Topic("orders"));
  ExpectOther(keys, other.Broker(NodeId(1)));
  ExpectOther(keys, KeyLayout("/other").ClusterId());
  ExpectOther(keys, "strata/topics/orders");  // no leading slash
  ExpectOther(keys, "/strata");               // the prefix without its slash
  ExpectOther(keys, "/strata/");              // the prefix itself
  ExpectOther(keys, "");
  ExpectOther(keys, "/health");
  // A nested cluster's keys under ours are not ours either.
  ExpectOther(keys, KeyLayout("/strata/inner").Controller());
  // ... and ours are not the nested cluster's.
  ExpectOther(KeyLayout("/strata/inner"), keys.Controller());
}

TEST(KeyLayout, MalformedKeysUnderThePrefixAreOther) {
  KeyLayout keys("/strata");
  const std::string id = "AAECAwQFBgcICQoLDA0ODw";
  for (const std::string& key : std::vector<std::string>{
           "/strata/cluster_id/x",
           "/strata/cluster_idx",
           "/strata/controllers",
           "/strata/producer_ids/1",
           "/strata/brokers",
           "/strata/brokers/",
           "/strata/brokers/abc",
           "/strata/brokers/1a",
           "/strata/brokers/ 1",
           "/strata/brokers/+1",
           "/strata/brokers/1.0",
           "/strata/brokers/2147483648",  // beyond int32
           "/strata/brokers/1/x",
           "/strata/partitions/",
           "/strata/partitions/" + id,
           "/strata/partitions/" + id + "/",
           "/strata/partitions/" + id + "/x",
           "/strata/partitions/" + id + "/1/2",
           "/strata/partitions/" + id + "/99999999999",
           "/strata/remote_log/" + id,
           "/strata/remote_log/" + id + "/",
           "/strata/remote_log/" + id + "/one",
           "/strata/configs/broker/1",
           "/strata/configs/topics/orders",
           "/strata/unknown/thing",
           "/strata/Topics/orders",
       }) {
    ExpectOther(keys, key);
  }
}

// The prefixes a view ranges over hold exactly the keys of their kind.
TEST(KeyLayout, KeysLieUnderTheirSectionPrefix) {
  KeyLayout keys("/p");
  const std::string id = "AAECAwQFBgcICQoLDA0ODw";
  auto under = [](const std::string& key, const std::string& prefix) {
    return key.compare(0, prefix.size(), prefix) == 0;
  };
  EXPECT_TRUE(under(keys.Broker(NodeId(3)), keys.BrokersPrefix()));
  EXPECT_TRUE(under(keys.Topic("t"), keys.TopicsPrefix()));
  EXPECT_TRUE(under(keys.Partition(id, 3), keys.TopicPartitions(id)));
  EXPECT_TRUE(under(keys.TopicPartitions(id), keys.PartitionsPrefix()));
  EXPECT_TRUE(under(keys.RemoteLog(id, 3), keys.TopicRemoteLogs(id)));
  EXPECT_TRUE(under(keys.TopicRemoteLogs(id), keys.RemoteLogPrefix()));
  EXPECT_TRUE(under(keys.PendingDeletion("d"), keys.PendingDeletionsPrefix()));
  EXPECT_TRUE(under(keys.DeletedTopic(id), keys.DeletedTopicsPrefix()));
  // One topic id's partitions prefix does not cover another id it prefixes.
  EXPECT_FALSE(under(keys.Partition(id + "x", 0), keys.TopicPartitions(id)));
  // Sections do not overlap: a topic named like another section stays a topic.
  ExpectParsed(keys, keys.Topic("brokers"), K::kTopic, "brokers", -1);
  ExpectParsed(keys, keys.Topic("partitions"), K::kTopic, "partitions", -1);
}

}  // namespace
}  // namespace strata::cluster
