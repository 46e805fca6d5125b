#include "config/broker_config.h"

#include <gtest/gtest.h>

namespace strata::config {
namespace {

TEST(BrokerConfigTest, DefaultsAndOverrides) {
  auto props = ParseProperties(
      "# comment\nnode.id=7\nlisteners=PLAINTEXT://127.0.0.1:19092\nlog.dirs=/tmp/a,/tmp/b\n"
      "log.retention.hours=2\nlog.segment.bytes = 1048576\n");
  std::vector<std::string> unknown;
  auto cfg = BrokerConfig::FromProperties(props, &unknown);
  EXPECT_EQ(cfg.node_id(), 7);
  EXPECT_EQ(cfg.log_dir(), "/tmp/a");
  ASSERT_EQ(cfg.listeners().size(), 1u);
  EXPECT_EQ(cfg.listeners()[0].port, 19092);
  EXPECT_EQ(cfg.advertised_listeners()[0].host, "127.0.0.1");
  EXPECT_EQ(cfg.GetLong("log.retention.ms"), 2 * 3600000);
  EXPECT_EQ(cfg.GetLong("log.segment.bytes"), 1048576);
  EXPECT_TRUE(cfg.IsExplicit("log.segment.bytes"));
  EXPECT_FALSE(cfg.IsExplicit("num.partitions"));
  EXPECT_TRUE(unknown.empty());
  EXPECT_EQ(cfg.TopicDefault(*FindTopicConfig("segment.bytes")), "1048576");
  EXPECT_EQ(cfg.TopicDefault(*FindTopicConfig("retention.ms")), "7200000");
}

// Topic defaults: a broker's dynamic value, then the cluster's dynamic
// default, then server.properties, then the table; copies share the dynamic
// part; only broker synonyms of topic configs are dynamic.
TEST(BrokerConfigTest, DynamicTopicDefaultsWinOverServerProperties) {
  std::vector<std::string> unknown;
  auto cfg = BrokerConfig::FromProperties({{"log.segment.bytes", "5000000"}}, &unknown);
  const ConfigDef& segment = *FindTopicConfig("segment.bytes");
  const ConfigDef& retention = *FindTopicConfig("retention.ms");
  const ConfigDef& compression = *FindTopicConfig("compression.type");
  EXPECT_EQ(cfg.TopicDefault(segment), "5000000");
  BrokerConfig copy = cfg;
  cfg.SetDynamic({{}, {{"log.segment.bytes", "20000"}, {"log.retention.ms", "1000"}}});
  EXPECT_EQ(copy.TopicDefault(segment), "20000");
  EXPECT_EQ(cfg.TopicDefault(retention), "1000");
  cfg.SetDynamic({{{"log.segment.bytes", "30000"}}, {{"log.segment.bytes", "20000"}}});
  EXPECT_EQ(cfg.TopicDefault(segment), "30000");
  EXPECT_EQ(cfg.TopicDefault(compression), "producer");
  cfg.SetDynamic({});
  EXPECT_EQ(cfg.TopicDefault(segment), "5000000");
  EXPECT_TRUE(BrokerConfig::IsDynamic("log.retention.ms"));
  EXPECT_FALSE(BrokerConfig::IsDynamic("num.network.threads"));
  EXPECT_FALSE(BrokerConfig::IsDynamic("retention.ms"));  // the topic name, not the broker's
}

// KIP-392: Kafka's rack-aware replica selector or none; any other class
// stops start-up naming the key and the class.
TEST(BrokerConfigTest, ReplicaSelectorIsNoneOrRackAware) {
  std::vector<std::string> unknown;
  EXPECT_EQ(BrokerConfig::FromProperties({}, &unknown).Get("replica.selector.class"), "");
  const std::string rack_aware = "org.apache.kafka.common.replica.RackAwareReplicaSelector";
  auto cfg = BrokerConfig::FromProperties({{"replica.selector.class", rack_aware}}, &unknown);
  EXPECT_EQ(cfg.Get("replica.selector.class"), rack_aware);
  try {
    BrokerConfig::FromProperties({{"replica.selector.class", "com.example.Nearest"}}, &unknown);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("replica.selector.class"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("com.example.Nearest"), std::string::npos);
  }
  EXPECT_TRUE(unknown.empty());
}

TEST(BrokerConfigTest, InvalidValueNamesTheKey) {
  std::vector<std::string> unknown;
  try {
    BrokerConfig::FromProperties({{"num.partitions", "zero"}}, &unknown);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("num.partitions"), std::string::npos);
  }
  EXPECT_THROW(BrokerConfig::FromProperties({{"num.partitions", "0"}}, &unknown), ConfigError);
  EXPECT_THROW(BrokerConfig::FromProperties({{"listeners", "127.0.0.1"}}, &unknown), ConfigError);
  EXPECT_THROW(BrokerConfig::FromProperties({{"auto.create.topics.enable", "yes"}}, &unknown),
               ConfigError);
}

TEST(BrokerConfigTest, UnknownKeysAreReported) {
  std::vector<std::string> unknown;
  BrokerConfig::FromProperties({{"no.such.key", "1"}}, &unknown);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0], "no.such.key");
}

TEST(TopicConfigTest, Validation) {
  EXPECT_FALSE(ValidateValue(*FindTopicConfig("cleanup.policy"), "compact,delete"));
  EXPECT_TRUE(ValidateValue(*FindTopicConfig("cleanup.policy"), "shred"));
  EXPECT_TRUE(ValidateValue(*FindTopicConfig("retention.ms"), "-5"));
  EXPECT_TRUE(ValidateValue(*FindTopicConfig("segment.bytes"), "99999999999"));
  EXPECT_FALSE(ValidateValue(*FindTopicConfig("min.cleanable.dirty.ratio"), "0.3"));
  EXPECT_TRUE(ValidateValue(*FindTopicConfig("min.cleanable.dirty.ratio"), "x"));
}

TEST(ConfigListTest, SplitsOnCommasAndTrimsLikeKafka) {
  EXPECT_EQ(SplitList(" compact , delete,,\tx "),
            (std::vector<std::string>{"compact", "delete", "x"}));
  EXPECT_TRUE(SplitList("").empty());
  EXPECT_TRUE(SplitList(" , ").empty());
}

}  // namespace
}  // namespace strata::config
