// Tests of the TLS contexts built from a listener's settings (PEM keystore
// and truststore, in files or inline) and of CertificateIdentityChange: a
// replacement certificate keeps the subject and every subject alternative
// name (it may add names), as Kafka's SslFactory requires.
#include "net/tls_context.h"

#include <gtest/gtest.h>

#include "net/test_certificates.h"

namespace strata::net {
namespace {

using test_certificates::KeyAndCertificate;
using test_certificates::ServedCertificate;
using test_certificates::TempDir;
using test_certificates::TestCa;

constexpr const char* kSans = "DNS:localhost,DNS:broker1.example.com,IP:127.0.0.1";

// A server context presenting `leaf` (inline PEM keystore).
std::shared_ptr<asio::ssl::context> Server(const TestCa& ca, const KeyAndCertificate& leaf) {
  TlsSettings s;
  s.keystore_key = leaf.key;
  s.keystore_certificate_chain = leaf.certificate + ca.certificate();
  s.truststore_certificates = ca.certificate();
  auto ctx = MakeServerTlsContext(s);
  EXPECT_TRUE(ctx.ok()) << ctx.error().message;
  return ctx.ok() ? *ctx : nullptr;
}

TEST(TlsContextTest, PemKeystoreAndTruststoreFiles) {
  TestCa ca;
  TempDir dir;
  const KeyAndCertificate leaf = ca.Issue("broker1", kSans);
  TlsSettings s;
  s.keystore_location = dir.Write("keystore.pem", ca.Keystore(leaf));
  s.truststore_location = dir.Write("truststore.pem", ca.certificate());
  s.client_auth = "required";
  auto server = MakeServerTlsContext(s);
  ASSERT_TRUE(server.ok()) << server.error().message;
  EXPECT_EQ(ServedCertificate(**server), leaf.certificate);
  auto client = MakeClientTlsContext(s);
  ASSERT_TRUE(client.ok()) << client.error().message;
  EXPECT_EQ(ServedCertificate(**client), leaf.certificate);
}

TEST(TlsContextTest, InlinePemKeystore) {
  TestCa ca;
  const KeyAndCertificate leaf = ca.Issue("broker1", kSans);
  auto server = Server(ca, leaf);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(ServedCertificate(*server), leaf.certificate);
}

TEST(TlsContextTest, KeyOfAnotherCertificateIsRefused) {
  TestCa ca;
  const KeyAndCertificate leaf = ca.Issue("broker1", kSans);
  const KeyAndCertificate other = ca.Issue("broker1", kSans);
  TlsSettings s;
  s.keystore_key = other.key;
  s.keystore_certificate_chain = leaf.certificate;
  auto server = MakeServerTlsContext(s);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.error().code, Errc::kInvalidArgument);
  EXPECT_NE(server.error().message.find("ssl.keystore"), std::string::npos)
      << server.error().message;
}

TEST(TlsContextTest, MissingKeystoreFileIsRefused) {
  TempDir dir;
  TlsSettings s;
  s.keystore_location = (dir.path() / "absent.pem").string();
  auto server = MakeServerTlsContext(s);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.error().code, Errc::kInvalidArgument);
  EXPECT_NE(server.error().message.find("ssl.keystore.location"), std::string::npos)
      << server.error().message;
}

TEST(CertificateIdentityChangeTest, SameSubjectAndNamesIsAccepted) {
  TestCa ca;
  const KeyAndCertificate before = ca.Issue("broker1", kSans);
  // Another key and serial number, the names in another order.
  const KeyAndCertificate after =
      ca.Issue("broker1", "IP:127.0.0.1,DNS:broker1.example.com,DNS:localhost");
  auto old_ctx = Server(ca, before);
  auto new_ctx = Server(ca, after);
  ASSERT_NE(old_ctx, nullptr);
  ASSERT_NE(new_ctx, nullptr);
  ASSERT_NE(ServedCertificate(*old_ctx), ServedCertificate(*new_ctx));
  EXPECT_EQ(CertificateIdentityChange(*old_ctx, *new_ctx), std::nullopt);
  EXPECT_EQ(CertificateIdentityChange(*old_ctx, *old_ctx), std::nullopt);
}

TEST(CertificateIdentityChangeTest, SameSubjectFromAnotherCaIsAccepted) {
  TestCa ca, other_ca("Another Test CA");
  auto old_ctx = Server(ca, ca.Issue("broker1", kSans));
  auto new_ctx = Server(other_ca, other_ca.Issue("broker1", kSans));
  ASSERT_NE(old_ctx, nullptr);
  ASSERT_NE(new_ctx, nullptr);
  EXPECT_EQ(CertificateIdentityChange(*old_ctx, *new_ctx), std::nullopt);
}

TEST(CertificateIdentityChangeTest, AddedNameIsAccepted) {
  TestCa ca;
  auto old_ctx = Server(ca, ca.Issue("broker1", kSans));
  auto new_ctx =
      Server(ca, ca.Issue("broker1", std::string(kSans) + ",DNS:broker1.internal,IP:10.0.0.1"));
  ASSERT_NE(old_ctx, nullptr);
  ASSERT_NE(new_ctx, nullptr);
  EXPECT_EQ(CertificateIdentityChange(*old_ctx, *new_ctx), std::nullopt);
  // The other way round it drops them.
  auto back = CertificateIdentityChange(*new_ctx, *old_ctx);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->starts_with("Keystore SubjectAltNames do not match")) << *back;
}

TEST(CertificateIdentityChangeTest, NamesAddedToACertificateWithoutAnyAreAccepted) {
  TestCa ca;
  auto old_ctx = Server(ca, ca.Issue("broker1", ""));
  auto new_ctx = Server(ca, ca.Issue("broker1", kSans));
  ASSERT_NE(old_ctx, nullptr);
  ASSERT_NE(new_ctx, nullptr);
  EXPECT_EQ(CertificateIdentityChange(*old_ctx, *new_ctx), std::nullopt);
}

TEST(CertificateIdentityChangeTest, DroppedNameIsRefused) {
  TestCa ca;
  auto old_ctx = Server(ca, ca.Issue("broker1", kSans));
  auto new_ctx = Server(ca, ca.Issue("broker1", "DNS:localhost,IP:127.0.0.1,DNS:extra.example"));
  ASSERT_NE(old_ctx, nullptr);
  ASSERT_NE(new_ctx, nullptr);
  auto changed = CertificateIdentityChange(*old_ctx, *new_ctx);
  ASSERT_TRUE(changed.has_value());
  EXPECT_TRUE(changed->starts_with("Keystore SubjectAltNames do not match")) << *changed;
  EXPECT_NE(changed->find("broker1.example.com"), std::string::npos) << *changed;

  // An IP address dropped, and every name dropped.
  auto no_ip = Server(ca, ca.Issue("broker1", "DNS:localhost,DNS:broker1.example.com"));
  auto none = Server(ca, ca.Issue("broker1", ""));
  ASSERT_NE(no_ip, nullptr);
  ASSERT_NE(none, nullptr);
  changed = CertificateIdentityChange(*old_ctx, *no_ip);
  ASSERT_TRUE(changed.has_value());
  EXPECT_TRUE(changed->starts_with("Keystore SubjectAltNames do not match")) << *changed;
  changed = CertificateIdentityChange(*old_ctx, *none);
  ASSERT_TRUE(changed.has_value());
  EXPECT_TRUE(changed->starts_with("Keystore SubjectAltNames do not match")) << *changed;
}

TEST(CertificateIdentityChangeTest, OtherSubjectIsRefused) {
  TestCa ca;
  auto old_ctx = Server(ca, ca.Issue("broker1", kSans));
  auto new_ctx = Server(ca, ca.Issue("broker2", kSans));
  ASSERT_NE(old_ctx, nullptr);
  ASSERT_NE(new_ctx, nullptr);
  auto changed = CertificateIdentityChange(*old_ctx, *new_ctx);
  ASSERT_TRUE(changed.has_value());
  EXPECT_TRUE(changed->starts_with("Keystore DistinguishedName does not match")) << *changed;
  EXPECT_NE(changed->find("CN=broker1"), std::string::npos) << *changed;
  EXPECT_NE(changed->find("CN=broker2"), std::string::npos) << *changed;
}

}  // namespace
}  // namespace strata::net
