// KafkaPrincipal's string form and parser.
#include "security/principal.h"

#include <gtest/gtest.h>

namespace strata::security {
namespace {

TEST(PrincipalTest, ToStringAndAnonymous) {
  EXPECT_EQ((KafkaPrincipal{"User", "alice"}).ToString(), "User:alice");
  EXPECT_EQ(KafkaPrincipal::Anonymous().ToString(), "User:ANONYMOUS");
  KafkaPrincipal p;
  EXPECT_EQ(p.type, "User");
}

TEST(PrincipalTest, ParseSplitsAtTheFirstColon) {
  auto p = ParsePrincipal("User:alice");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(*p, (KafkaPrincipal{"User", "alice"}));
  auto q = ParsePrincipal("User:CN=a:b,O=c");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->name, "CN=a:b,O=c");
  auto g = ParsePrincipal("Group:ops");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->type, "Group");
}

TEST(PrincipalTest, ParseRefusesMalformed) {
  for (const char* bad : {"alice", "", ":alice", "User:"}) {
    auto p = ParsePrincipal(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.error().code, Errc::kInvalidArgument);
  }
  EXPECT_NE(ParsePrincipal("alice").error().message.find("principalType:principalName"),
            std::string::npos);
}

}  // namespace
}  // namespace strata::security
