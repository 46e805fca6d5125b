// ListenerConfig: named listeners, their security protocols, advertised
// endpoints and the inter-broker listener, with Kafka's keys and rules.
#include "config/listeners.h"

#include <gtest/gtest.h>

#include "config/broker_config.h"

namespace strata::config {
namespace {

BrokerConfig Make(const Properties& props) {
  std::vector<std::string> unknown;
  return BrokerConfig::FromProperties(props, &unknown);
}

TEST(ListenersTest, NamedListenersGetTheirProtocolsAndAdvertisedEndpoints) {
  BrokerConfig cfg = Make({{"listeners", "CLIENT://0.0.0.0:9092,BROKER://127.0.0.1:9093"},
                           {"advertised.listeners", "CLIENT://kafka-1.example:19092"},
                           {"listener.security.protocol.map", "CLIENT:SASL_SSL,BROKER:PLAINTEXT"},
                           {"inter.broker.listener.name", "BROKER"}});
  ASSERT_EQ(cfg.listeners().size(), 2u);
  EXPECT_EQ(cfg.listeners()[0].protocol, SecurityProtocol::kSaslSsl);
  EXPECT_EQ(cfg.listeners()[1].protocol, SecurityProtocol::kPlaintext);
  ASSERT_EQ(cfg.advertised_listeners().size(), 2u);
  EXPECT_EQ(cfg.advertised_listeners()[0].host, "kafka-1.example");
  EXPECT_EQ(cfg.advertised_listeners()[0].port, 19092);
  // Not given: advertised as it listens.
  EXPECT_EQ(cfg.advertised_listeners()[1].listener_name, "BROKER");
  EXPECT_EQ(cfg.advertised_listeners()[1].port, 9093);
  EXPECT_EQ(cfg.inter_broker_listener(), "BROKER");
}

TEST(ListenersTest, TheInterBrokerListenerDefaultsToTheOneNamedAfterItsProtocol) {
  BrokerConfig cfg = Make({{"listeners", "SSL://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9092"}});
  EXPECT_EQ(cfg.inter_broker_listener(), "PLAINTEXT");
  EXPECT_EQ(cfg.listeners()[0].protocol, SecurityProtocol::kSsl);
  cfg = Make({{"listeners", "SSL://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9092"},
              {"security.inter.broker.protocol", "SSL"}});
  EXPECT_EQ(cfg.inter_broker_listener(), "SSL");
  // One listener: it, whatever its name.
  cfg = Make({{"listeners", "INTERNAL://127.0.0.1:9092"},
              {"listener.security.protocol.map", "INTERNAL:PLAINTEXT"}});
  EXPECT_EQ(cfg.inter_broker_listener(), "INTERNAL");
}

TEST(ListenersTest, MistakesAreRefusedNamingTheKey) {
  auto refused = [](const Properties& props, const std::string& key) {
    try {
      Make(props);
      ADD_FAILURE() << "accepted; expected an error naming " << key;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  refused({{"listeners", "CLIENT://127.0.0.1:9092"}}, "listener.security.protocol.map");
  refused({{"listeners", "PLAINTEXT://127.0.0.1:9092,PLAINTEXT://127.0.0.1:9093"}}, "listeners");
  refused({{"listeners", "PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9092"}}, "listeners");
  refused({{"listeners", "PLAINTEXT://127.0.0.1:9092"},
           {"listener.security.protocol.map", "PLAINTEXT:TLS"}},
          "listener.security.protocol.map");
  refused(
      {{"listeners", "PLAINTEXT://127.0.0.1:9092"}, {"advertised.listeners", "SSL://example:9093"}},
      "advertised.listeners");
  refused({{"listeners", "PLAINTEXT://127.0.0.1:9092"}, {"inter.broker.listener.name", "BROKER"}},
          "inter.broker.listener.name");
  refused({{"listeners", "PLAINTEXT://127.0.0.1:9092"},
           {"inter.broker.listener.name", "PLAINTEXT"},
           {"security.inter.broker.protocol", "PLAINTEXT"}},
          "inter.broker.listener.name");
  refused({{"listeners", "A://127.0.0.1:9092,B://127.0.0.1:9093"},
           {"listener.security.protocol.map", "A:PLAINTEXT,B:PLAINTEXT"}},
          "inter.broker.listener.name");
}

}  // namespace
}  // namespace strata::config
