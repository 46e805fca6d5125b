// SslPrincipalMapper against Kafka's documented rules (KIP-371), and the
// subject of certificates made here with OpenSSL, formatted as Java does.
#include "security/ssl_principal.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>

namespace strata::security {
namespace {

std::string MapOk(const SslPrincipalMapper& mapper, std::string_view dn) {
  auto name = mapper.Map(dn);
  EXPECT_TRUE(name.ok()) << name.error().message;
  return name.ok() ? *name : "";
}

SslPrincipalMapper ParseOk(std::string_view rules) {
  auto mapper = SslPrincipalMapper::Parse(rules);
  EXPECT_TRUE(mapper.ok()) << mapper.error().message;
  return mapper.ok() ? std::move(mapper).value() : SslPrincipalMapper();
}

TEST(SslPrincipalMapperTest, KafkaDocumentedRules) {
  SslPrincipalMapper mapper = ParseOk(
      "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,"
      "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
      "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,"
      "DEFAULT");
  EXPECT_EQ(
      MapOk(mapper, "CN=serviceuser,OU=ServiceUsers,O=Unknown,L=Unknown,ST=Unknown,C=Unknown"),
      "serviceuser");
  EXPECT_EQ(MapOk(mapper, "CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown"),
            "adminuser@admin");
  EXPECT_EQ(MapOk(mapper, "OU=JavaSoft,O=Sun Microsystems,cn=Duke.Two,C=US"), "duke.two");
  EXPECT_EQ(MapOk(mapper, "OU=nothing"), "OU=nothing");  // DEFAULT
}

TEST(SslPrincipalMapperTest, RulesOnSeveralLinesWithSpaces) {
  SslPrincipalMapper mapper = ParseOk(
      "  RULE:^CN=([^,]*),OU=A$/$1/U ,\n"
      "\tRULE:^CN=([^,]*),O=x\\/y$/$1 in x\\/y/  ,\n"
      "  DEFAULT  ");
  EXPECT_EQ(MapOk(mapper, "CN=bob,OU=A"), "BOB");
  // An escaped slash in both the pattern and the replacement.
  EXPECT_EQ(MapOk(mapper, "CN=bob,O=x/y"), "bob in x/y");
  EXPECT_EQ(mapper.RulesString(),
            "[RULE:^CN=([^,]*),OU=A$/$1/U, RULE:^CN=([^,]*),O=x\\/y$/$1 in x\\/y, DEFAULT]");
}

TEST(SslPrincipalMapperTest, CaseFlags) {
  EXPECT_EQ(MapOk(ParseOk("RULE:^CN=(.*)$/$1/L"), "CN=MiXeD"), "mixed");
  EXPECT_EQ(MapOk(ParseOk("RULE:^CN=(.*)$/$1/U"), "CN=MiXeD"), "MIXED");
  EXPECT_EQ(MapOk(ParseOk("RULE:^CN=(.*)$/$1/"), "CN=MiXeD"), "MiXeD");
}

TEST(SslPrincipalMapperTest, ReplacementReferencesAsJava) {
  // A reference beyond the pattern's groups is literal text (Kafka), "\$" a
  // dollar, and $12 with one group is group 1 followed by "2" (Java).
  EXPECT_EQ(MapOk(ParseOk("RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1@$4/"), "CN=a,OU=b,O=c"), "a@$4");
  EXPECT_EQ(MapOk(ParseOk("RULE:^CN=(.*)$/\\$1=$1/"), "CN=a"), "$1=a");
  EXPECT_EQ(MapOk(ParseOk("RULE:^CN=(.*)$/$12/"), "CN=a"), "a2");
  EXPECT_EQ(MapOk(ParseOk("RULE:^CN=(.*)$/[$0]/"), "CN=a"), "[CN=a]");
  EXPECT_EQ(MapOk(ParseOk("RULE:^CN=(x)?(.*)$/<$1>$2/"), "CN=a"), "<>a");
}

TEST(SslPrincipalMapperTest, PatternMustMatchTheWholeName) {
  SslPrincipalMapper mapper = ParseOk("RULE:CN=([a-z]+)/$1/");
  EXPECT_EQ(MapOk(mapper, "CN=alice"), "alice");
  auto miss = mapper.Map("CN=alice,O=x");
  ASSERT_FALSE(miss.ok());
  EXPECT_EQ(miss.error().message, "No rules apply to CN=alice,O=x, rules [RULE:CN=([a-z]+)/$1]");
}

TEST(SslPrincipalMapperTest, DefaultAndEmptyRules) {
  EXPECT_EQ(MapOk(SslPrincipalMapper(), "CN=a,O=b"), "CN=a,O=b");
  EXPECT_EQ(MapOk(ParseOk("DEFAULT"), "CN=a,O=b"), "CN=a,O=b");
  EXPECT_EQ(MapOk(ParseOk("DEFAULT,"), "CN=a"), "CN=a");
  EXPECT_EQ(MapOk(ParseOk("RULE:^x$/y/,,DEFAULT"), "x"), "y");
  // An empty list has no rules at all, as in Kafka.
  SslPrincipalMapper none = ParseOk("  ");
  EXPECT_EQ(none.RulesString(), "[]");
  EXPECT_FALSE(none.Map("CN=a").ok());
}

TEST(SslPrincipalMapperTest, InvalidRules) {
  for (const char* bad : {
           "DEFAUL",
           "DEFAULT/L",
           "DEFAULT/U",
           "RULE:CN=(.*?),OU=ServiceUsers.*/$1",
           "RULE:CN=(.*?),OU=ServiceUsers.*/$1/L/U",
           "RULE:CN=(.*?),OU=ServiceUsers.*/L",
           "RULE:CN=(.*?),OU=ServiceUsers.*/U",
           "RULE:CN=(.*?),OU=ServiceUsers.*/$1/LU",
           "RULE:CN=(.*?),OU=ServiceUsers.*/$1/X",
           "rule:^a$/b/",
           "DEFAULT,garbage",
           "RULE:^(a$/b/",
           "RULE:^a\\",
       }) {
    auto mapper = SslPrincipalMapper::Parse(bad);
    ASSERT_FALSE(mapper.ok()) << bad;
    EXPECT_EQ(mapper.error().code, Errc::kInvalidArgument);
    EXPECT_EQ(mapper.error().message.rfind("Invalid rule: ", 0), 0u) << mapper.error().message;
  }
  EXPECT_EQ(SslPrincipalMapper::Parse("DEFAULT, DEFAULTX ,DEFAULT").error().message,
            "Invalid rule: DEFAULTX");
}

// --- certificates ---

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

// A self-signed certificate (P-256 key) whose subject is `entries` in
// encoding order; `merge` adds an entry to the previous RDN.
struct NameEntry {
  const char* field;
  std::string value;
  int type = MBSTRING_UTF8;
  bool merge = false;
};
X509Ptr MakeCert(const std::vector<NameEntry>& entries) {
  std::unique_ptr<EVP_PKEY, PkeyFree> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  EXPECT_NE(key, nullptr);
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const NameEntry& e : entries) {
    EXPECT_EQ(X509_NAME_add_entry_by_txt(name, e.field, e.type,
                                         reinterpret_cast<const unsigned char*>(e.value.data()),
                                         static_cast<int>(e.value.size()), -1, e.merge ? -1 : 0),
              1)
        << e.field;
  }
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  EXPECT_GT(X509_sign(cert.get(), key.get(), EVP_sha256()), 0);
  return cert;
}

TEST(DistinguishedNameTest, MostSpecificFirst) {
  X509Ptr cert = MakeCert({{"C", "US"}, {"O", "Acme"}, {"OU", "eng"}, {"CN", "alice"}});
  EXPECT_EQ(DistinguishedName(cert.get()), "CN=alice,OU=eng,O=Acme,C=US");
}

TEST(DistinguishedNameTest, AllRfc2253Keywords) {
  X509Ptr cert = MakeCert({{"DC", "com", MBSTRING_ASC},
                           {"DC", "example", MBSTRING_ASC},
                           {"C", "DE"},
                           {"ST", "Bavaria"},
                           {"L", "Munich"},
                           {"street", "Main St 1"},
                           {"O", "Acme"},
                           {"OU", "ops"},
                           {"UID", "u123"},
                           {"CN", "bob"}});
  EXPECT_EQ(DistinguishedName(cert.get()),
            "CN=bob,UID=u123,OU=ops,O=Acme,STREET=Main St 1,L=Munich,ST=Bavaria,C=DE,"
            "DC=example,DC=com");
}

TEST(DistinguishedNameTest, EscapesAndUtf8) {
  X509Ptr cert = MakeCert(
      {{"O", " lead#trail "}, {"OU", "a=b;c<d>\"e\\f"}, {"CN", "x,y+z"}, {"L", "M\xc3\xbcnchen"}});
  EXPECT_EQ(DistinguishedName(cert.get()),
            "L=M\xc3\xbcnchen,CN=x\\,y\\+z,OU=a\\=b\\;c\\<d\\>\\\"e\\\\f,O=\\ lead\\#trail\\ ");
}

TEST(DistinguishedNameTest, UnnamedAttributesAsOidAndDerHex) {
  X509Ptr cert = MakeCert({{"O", "Acme"}, {"emailAddress", "a@b.c", MBSTRING_ASC}, {"CN", "a"}});
  // emailAddress is an IA5String (tag 0x16) of 5 bytes.
  EXPECT_EQ(DistinguishedName(cert.get()), "CN=a,1.2.840.113549.1.9.1=#16056140622e63,O=Acme");
}

TEST(DistinguishedNameTest, MultiValuedRdn) {
  X509Ptr cert = MakeCert({{"O", "Acme"}, {"CN", "alice"}, {"UID", "7", MBSTRING_UTF8, true}});
  EXPECT_EQ(DistinguishedName(cert.get()), "CN=alice+UID=7,O=Acme");
}

TEST(PrincipalFromCertificateTest, AnonymousWithoutCertificate) {
  auto p = PrincipalFromCertificate(nullptr, SslPrincipalMapper());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, KafkaPrincipal::Anonymous());
}

TEST(PrincipalFromCertificateTest, MappedSubject) {
  X509Ptr cert = MakeCert({{"C", "US"}, {"O", "Acme"}, {"OU", "eng"}, {"CN", "Alice"}});
  auto p = PrincipalFromCertificate(cert.get(), ParseOk("RULE:^CN=([^,]+),OU=eng,.*$/$1/L"));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->ToString(), "User:alice");
  auto whole = PrincipalFromCertificate(cert.get(), SslPrincipalMapper());
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->name, "CN=Alice,OU=eng,O=Acme,C=US");
  EXPECT_FALSE(PrincipalFromCertificate(cert.get(), ParseOk("RULE:^CN=bob.*$/bob/")).ok());
}

}  // namespace
}  // namespace strata::security
