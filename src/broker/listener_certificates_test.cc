// Tests of ListenerCertificates: a listener's TLS context replaced without a
// restart when this broker's dynamic configs name another keystore or its
// file is rewritten in place, as long as the certificate keeps its subject
// and subject alternative names; refused replacements keep the context in
// use and are refused again when proposed (InvalidReason).
#include "broker/listener_certificates.h"

#include <gtest/gtest.h>

#include "base/clock.h"
#include "net/test_certificates.h"

namespace strata::broker {
namespace {

using net::test_certificates::KeyAndCertificate;
using net::test_certificates::ServedCertificate;
using net::test_certificates::TempDir;
using net::test_certificates::TestCa;

constexpr const char* kSans = "DNS:localhost,IP:127.0.0.1";
constexpr const char* kKeystoreKey = "listener.name.ssl.ssl.keystore.location";
constexpr const char* kBrokerKeystoreKey = "listener.name.broker.ssl.keystore.location";
constexpr const char* kRefusedPrefix = "Validation of dynamic config update of SSLFactory failed: ";

std::string Served(const std::shared_ptr<asio::ssl::context>& ctx) {
  return ctx == nullptr ? std::string("(no context)") : ServedCertificate(*ctx);
}

bool StartsWith(const std::optional<std::string>& s, const std::string& prefix) {
  return s.has_value() && s->starts_with(prefix);
}

// Two SSL listeners (SSL, and BROKER the inter-broker one) and a plaintext
// one, all with the keystore and truststore files in `dir`.
class ListenerCertificatesTest : public ::testing::Test {
 protected:
  ListenerCertificatesTest()
      : leaf_(ca_.Issue("broker1", kSans)),
        keystore_(dir_.Write("keystore.pem", ca_.Keystore(leaf_))),
        truststore_(dir_.Write("truststore.pem", ca_.certificate())),
        config_(MakeConfig()) {}

  config::BrokerConfig MakeConfig() {
    config::Properties props{
        {"node.id", "1"},
        {"log.dirs", "/nonexistent"},
        {"listeners", "SSL://127.0.0.1:19093,BROKER://127.0.0.1:19094,PLAIN://127.0.0.1:19092"},
        {"listener.security.protocol.map", "SSL:SSL,BROKER:SSL,PLAIN:PLAINTEXT"},
        {"inter.broker.listener.name", "BROKER"},
        {"ssl.keystore.location", keystore_},
        {"ssl.truststore.location", truststore_},
    };
    std::vector<std::string> unknown;
    return config::BrokerConfig::FromProperties(props, &unknown);
  }

  // This broker's dynamic configs become `broker` (a new generation).
  void SetDynamic(std::map<std::string, std::string> broker) {
    config::BrokerConfig::DynamicConfigs dynamic;
    dynamic.broker = std::move(broker);
    config_.SetDynamic(std::move(dynamic));
  }

  // A keystore file for a new leaf of `cn` and `sans`.
  std::string NewKeystore(const std::string& name, const std::string& cn, const std::string& sans,
                          KeyAndCertificate* leaf) {
    *leaf = ca_.Issue(cn, sans);
    return dir_.Write(name, ca_.Keystore(*leaf));
  }

  TestCa ca_;
  TempDir dir_;
  KeyAndCertificate leaf_;
  std::string keystore_;
  std::string truststore_;
  config::BrokerConfig config_;
};

TEST_F(ListenerCertificatesTest, AddBuildsTheFirstContexts) {
  ListenerCertificates certificates(config_);
  auto added = certificates.Add("SSL");
  ASSERT_TRUE(added.ok()) << added.error().message;
  EXPECT_EQ(Served(*added), leaf_.certificate);
  EXPECT_EQ(certificates.Current("SSL"), *added);
  EXPECT_EQ(certificates.ClientContext("SSL"), nullptr);  // not added with a client context
  // Listeners never added have none.
  EXPECT_EQ(certificates.Current("BROKER"), nullptr);
  EXPECT_EQ(certificates.Current("NOSUCH"), nullptr);
  EXPECT_EQ(certificates.ClientContext("NOSUCH"), nullptr);
}

TEST_F(ListenerCertificatesTest, AddFailsOnAKeystoreThatDoesNotLoad) {
  SetDynamic({{kKeystoreKey, (dir_.path() / "absent.pem").string()}});
  ListenerCertificates certificates(config_);
  auto added = certificates.Add("SSL");
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.error().message.find("ssl.keystore.location"), std::string::npos)
      << added.error().message;
  EXPECT_EQ(certificates.Current("SSL"), nullptr);
}

TEST_F(ListenerCertificatesTest, CurrentSwitchesToANewKeystoreWithTheSameIdentity) {
  ListenerCertificates certificates(config_);
  auto added = certificates.Add("SSL");
  ASSERT_TRUE(added.ok()) << added.error().message;
  KeyAndCertificate renewed;
  // The same subject and names, one more name.
  const std::map<std::string, std::string> proposal{
      {kKeystoreKey,
       NewKeystore("renewed.pem", "broker1", std::string(kSans) + ",DNS:b1.example", &renewed)}};
  EXPECT_EQ(certificates.InvalidReason(proposal), std::nullopt);
  EXPECT_EQ(Served(certificates.Current("SSL")), leaf_.certificate);  // not applied yet

  SetDynamic(proposal);
  auto current = certificates.Current("SSL");
  EXPECT_NE(current, *added);
  EXPECT_EQ(Served(current), renewed.certificate);
  EXPECT_EQ(certificates.Current("SSL"), current);  // built once
  // The context it came from still works for the connections that use it.
  EXPECT_EQ(Served(*added), leaf_.certificate);
  // Proposing what is in use is fine.
  EXPECT_EQ(certificates.InvalidReason(proposal), std::nullopt);
}

TEST_F(ListenerCertificatesTest, AnotherSubjectIsRefusedAndTheOldContextKept) {
  ListenerCertificates certificates(config_);
  auto added = certificates.Add("SSL");
  ASSERT_TRUE(added.ok()) << added.error().message;
  KeyAndCertificate other;
  const std::map<std::string, std::string> proposal{
      {kKeystoreKey, NewKeystore("other.pem", "broker2", kSans, &other)}};
  const std::string refused = std::string(kRefusedPrefix) + "Keystore DistinguishedName";
  auto reason = certificates.InvalidReason(proposal);
  EXPECT_TRUE(StartsWith(reason, refused)) << reason.value_or("(accepted)");

  // Installed anyway (another broker's AlterConfigs, say): refused at reload.
  SetDynamic(proposal);
  EXPECT_EQ(certificates.Current("SSL"), *added);
  EXPECT_EQ(Served(certificates.Current("SSL")), leaf_.certificate);
  // Still refused when proposed again: compared with the keystore in use,
  // not with the one last looked at.
  reason = certificates.InvalidReason(proposal);
  EXPECT_TRUE(StartsWith(reason, refused)) << reason.value_or("(accepted)");

  // A good keystore afterwards is applied.
  KeyAndCertificate renewed;
  SetDynamic({{kKeystoreKey, NewKeystore("renewed.pem", "broker1", kSans, &renewed)}});
  EXPECT_EQ(Served(certificates.Current("SSL")), renewed.certificate);
}

TEST_F(ListenerCertificatesTest, ADroppedNameIsRefusedAndTheOldContextKept) {
  ListenerCertificates certificates(config_);
  auto added = certificates.Add("SSL");
  ASSERT_TRUE(added.ok()) << added.error().message;
  KeyAndCertificate fewer;
  const std::map<std::string, std::string> proposal{
      {kKeystoreKey, NewKeystore("fewer.pem", "broker1", "DNS:localhost", &fewer)}};
  const std::string refused = std::string(kRefusedPrefix) + "Keystore SubjectAltNames";
  auto reason = certificates.InvalidReason(proposal);
  EXPECT_TRUE(StartsWith(reason, refused)) << reason.value_or("(accepted)");
  SetDynamic(proposal);
  EXPECT_EQ(certificates.Current("SSL"), *added);
  reason = certificates.InvalidReason(proposal);
  EXPECT_TRUE(StartsWith(reason, refused)) << reason.value_or("(accepted)");
}

TEST_F(ListenerCertificatesTest, AKeystoreThatDoesNotLoadIsRefusedAndTheOldContextKept) {
  ListenerCertificates certificates(config_);
  auto added = certificates.Add("SSL");
  ASSERT_TRUE(added.ok()) << added.error().message;
  const std::map<std::string, std::string> missing{
      {kKeystoreKey, (dir_.path() / "absent.pem").string()}};
  const std::map<std::string, std::string> garbage{
      {kKeystoreKey, dir_.Write("garbage.pem", "not a keystore")}};
  for (const auto& proposal : {missing, garbage}) {
    auto reason = certificates.InvalidReason(proposal);
    EXPECT_TRUE(StartsWith(reason, kRefusedPrefix)) << reason.value_or("(accepted)");
    SetDynamic(proposal);
    EXPECT_EQ(certificates.Current("SSL"), *added);
    reason = certificates.InvalidReason(proposal);
    EXPECT_TRUE(StartsWith(reason, kRefusedPrefix)) << reason.value_or("(accepted)");
  }
}

TEST_F(ListenerCertificatesTest, AFileRewrittenInPlaceIsPickedUp) {
  ListenerCertificates certificates(config_);
  const int64_t start = Clock::Real()->MonotonicMs();
  auto added = certificates.Add("SSL");
  ASSERT_TRUE(added.ok()) << added.error().message;
  const KeyAndCertificate renewed = ca_.Issue("broker1", kSans);
  dir_.Write("keystore.pem", ca_.Keystore(renewed));
  // Files are rechecked at most every kRecheckMs (unless the dynamic
  // configs change).
  auto current = certificates.Current("SSL");
  if (Clock::Real()->MonotonicMs() - start < ListenerCertificates::kRecheckMs) {
    EXPECT_EQ(current, *added);
  }
  // Another dynamic config changes: the files are looked at now.
  SetDynamic({{"leader.replication.throttled.rate", "1000"}});
  current = certificates.Current("SSL");
  EXPECT_NE(current, *added);
  EXPECT_EQ(Served(current), renewed.certificate);
}

TEST_F(ListenerCertificatesTest, AFileRewrittenInPlaceWithAnotherSubjectIsRefused) {
  ListenerCertificates certificates(config_);
  auto added = certificates.Add("SSL");
  ASSERT_TRUE(added.ok()) << added.error().message;
  dir_.Write("keystore.pem", ca_.Keystore(ca_.Issue("broker2", kSans)));
  SetDynamic({{"leader.replication.throttled.rate", "1000"}});
  EXPECT_EQ(certificates.Current("SSL"), *added);
  EXPECT_EQ(Served(certificates.Current("SSL")), leaf_.certificate);
  // What the file holds now is what a proposal naming it would bring.
  auto reason = certificates.InvalidReason({{kKeystoreKey, keystore_}});
  EXPECT_TRUE(StartsWith(reason, std::string(kRefusedPrefix) + "Keystore DistinguishedName"))
      << reason.value_or("(accepted)");
}

TEST_F(ListenerCertificatesTest, AnotherTruststoreIsApplied) {
  ListenerCertificates certificates(config_);
  auto added = certificates.Add("SSL");
  ASSERT_TRUE(added.ok()) << added.error().message;
  TestCa other_ca("Another Test CA");
  const std::map<std::string, std::string> proposal{
      {"listener.name.ssl.ssl.truststore.location",
       dir_.Write("truststore2.pem", ca_.certificate() + other_ca.certificate())}};
  EXPECT_EQ(certificates.InvalidReason(proposal), std::nullopt);
  SetDynamic(proposal);
  auto current = certificates.Current("SSL");
  EXPECT_NE(current, *added);
  EXPECT_EQ(Served(current), leaf_.certificate);
}

TEST_F(ListenerCertificatesTest, ClientContextSwitchesTooWhenAddedWithOne) {
  ListenerCertificates certificates(config_);
  auto broker = certificates.Add("BROKER", /*with_client=*/true);
  ASSERT_TRUE(broker.ok()) << broker.error().message;
  auto ssl = certificates.Add("SSL");
  ASSERT_TRUE(ssl.ok()) << ssl.error().message;
  auto client = certificates.ClientContext("BROKER");
  ASSERT_NE(client, nullptr);
  EXPECT_NE(client, *broker);
  EXPECT_EQ(Served(client), leaf_.certificate);
  EXPECT_EQ(certificates.ClientContext("SSL"), nullptr);

  KeyAndCertificate renewed;
  SetDynamic({{kBrokerKeystoreKey, NewKeystore("renewed.pem", "broker1", kSans, &renewed)}});
  auto new_client = certificates.ClientContext("BROKER");
  ASSERT_NE(new_client, nullptr);
  EXPECT_NE(new_client, client);
  EXPECT_EQ(Served(new_client), renewed.certificate);
  EXPECT_EQ(Served(certificates.Current("BROKER")), renewed.certificate);
  // The other listener keeps its own.
  EXPECT_EQ(certificates.Current("SSL"), *ssl);
  EXPECT_EQ(certificates.ClientContext("SSL"), nullptr);
}

TEST_F(ListenerCertificatesTest, ARefusedKeystoreKeepsTheClientContextToo) {
  ListenerCertificates certificates(config_);
  ASSERT_TRUE(certificates.Add("BROKER", /*with_client=*/true).ok());
  auto client = certificates.ClientContext("BROKER");
  ASSERT_NE(client, nullptr);
  KeyAndCertificate other;
  SetDynamic({{kBrokerKeystoreKey, NewKeystore("other.pem", "broker2", kSans, &other)}});
  EXPECT_EQ(certificates.ClientContext("BROKER"), client);
  EXPECT_EQ(Served(certificates.ClientContext("BROKER")), leaf_.certificate);
}

TEST_F(ListenerCertificatesTest, InvalidReasonForAListenerThatIsNotAnSslOneOfThisBroker) {
  ListenerCertificates certificates(config_);
  ASSERT_TRUE(certificates.Add("SSL").ok());
  KeyAndCertificate renewed;
  const std::string good = NewKeystore("renewed.pem", "broker1", kSans, &renewed);
  for (const char* listener : {"nosuch", "plain"}) {
    const std::string key = std::string("listener.name.") + listener + ".ssl.keystore.location";
    auto reason = certificates.InvalidReason({{key, good}});
    ASSERT_TRUE(reason.has_value()) << key;
    EXPECT_NE(reason->find(key), std::string::npos) << *reason;
    EXPECT_NE(reason->find("is not an SSL or SASL_SSL listener of this broker"), std::string::npos)
        << *reason;
  }
  // Other dynamic configs are none of its business.
  EXPECT_EQ(certificates.InvalidReason({{"leader.replication.throttled.rate", "1000"}}),
            std::nullopt);
  EXPECT_EQ(certificates.InvalidReason({}), std::nullopt);
}

}  // namespace
}  // namespace strata::broker
