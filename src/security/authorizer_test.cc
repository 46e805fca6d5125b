// StandardAuthorizer's decisions over an AclSnapshot.
#include "security/authorizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::security {
namespace {

const KafkaPrincipal kAlice{"User", "alice"};
const KafkaPrincipal kBob{"User", "bob"};
constexpr std::string_view kHost = "10.0.0.1";

AclBinding Acl(std::string name, PatternType pattern, std::string principal, AclOperation op,
               AclPermission perm = AclPermission::kAllow, std::string host = "*",
               ResourceType type = ResourceType::kTopic) {
  return AclBinding{{type, std::move(name), pattern},
                    {std::move(principal), std::move(host), op, perm}};
}

AclBinding Allow(std::string topic, std::string principal, AclOperation op) {
  return Acl(std::move(topic), PatternType::kLiteral, std::move(principal), op);
}

AclBinding Deny(std::string topic, std::string principal, AclOperation op) {
  return Acl(std::move(topic), PatternType::kLiteral, std::move(principal), op,
             AclPermission::kDeny);
}

class AuthorizerTest : public ::testing::Test {
 protected:
  void Use(std::vector<AclBinding> bindings) { snapshot_ = AclSnapshot(std::move(bindings)); }

  AuthorizationResult Check(const KafkaPrincipal& who, AclOperation op, std::string_view topic,
                            std::string_view host = kHost) const {
    return Authorize(snapshot_, settings_, who, host, op, ResourceType::kTopic, topic);
  }
  bool Allowed(const KafkaPrincipal& who, AclOperation op, std::string_view topic,
               std::string_view host = kHost) const {
    return Check(who, op, topic, host).allowed;
  }
  bool Any(const KafkaPrincipal& who, AclOperation op,
           ResourceType type = ResourceType::kTopic) const {
    return AuthorizeAny(snapshot_, settings_, who, kHost, op, type);
  }

  AclSnapshot snapshot_;
  AuthorizerSettings settings_;
};

TEST(SuperUsersTest, ParsesSemicolonSeparatedTrimmed) {
  auto users = ParseSuperUsers(" User:admin ; User:broker;;\tUser:CN=a:b \n");
  ASSERT_TRUE(users.ok()) << users.error().message;
  ASSERT_EQ(users->size(), 3u);
  EXPECT_EQ((*users)[0], (KafkaPrincipal{"User", "admin"}));
  EXPECT_EQ((*users)[1], (KafkaPrincipal{"User", "broker"}));
  EXPECT_EQ((*users)[2], (KafkaPrincipal{"User", "CN=a:b"}));
  auto empty = ParseSuperUsers("  ");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  auto bad = ParseSuperUsers("User:admin;bob");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Errc::kInvalidArgument);
}

TEST_F(AuthorizerTest, SuperUserIsAlwaysAllowed) {
  Use({Deny("t", "User:*", AclOperation::kAll)});
  settings_.super_users = {kAlice};
  AuthorizationResult r = Check(kAlice, AclOperation::kDelete, "t");
  EXPECT_TRUE(r.allowed);
  EXPECT_EQ(r.reason, "super user");
  EXPECT_FALSE(Allowed(kBob, AclOperation::kDelete, "t"));
  EXPECT_TRUE(Any(kAlice, AclOperation::kWrite));
}

TEST_F(AuthorizerTest, LiteralAllow) {
  Use({Allow("t", "User:alice", AclOperation::kRead)});
  AuthorizationResult r = Check(kAlice, AclOperation::kRead, "t");
  EXPECT_TRUE(r.allowed);
  EXPECT_EQ(r.reason.rfind("ALLOW rule (principal=User:alice", 0), 0u) << r.reason;
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kWrite, "t"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kRead, "t2"));  // no ACL, default deny
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kRead, "tt"));  // a literal is not a prefix
  EXPECT_FALSE(Allowed(kBob, AclOperation::kRead, "t"));
  EXPECT_EQ(Check(kBob, AclOperation::kRead, "t").reason, "no ALLOW rule matched");
  // Another resource type with the same name is not covered.
  EXPECT_FALSE(
      Authorize(snapshot_, settings_, kAlice, kHost, AclOperation::kRead, ResourceType::kGroup, "t")
          .allowed);
}

TEST_F(AuthorizerTest, WildcardPrincipalAndWildcardResource) {
  Use({Allow("t", "User:*", AclOperation::kRead), Allow("*", "User:bob", AclOperation::kWrite)});
  EXPECT_TRUE(Allowed(kAlice, AclOperation::kRead, "t"));
  EXPECT_TRUE(Allowed(kBob, AclOperation::kRead, "t"));
  EXPECT_TRUE(Allowed(kBob, AclOperation::kWrite, "anything"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kWrite, "anything"));
}

TEST_F(AuthorizerTest, HostMustMatch) {
  Use({Acl("t", PatternType::kLiteral, "User:alice", AclOperation::kRead, AclPermission::kAllow,
           "10.0.0.1")});
  EXPECT_TRUE(Allowed(kAlice, AclOperation::kRead, "t", "10.0.0.1"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kRead, "t", "10.0.0.2"));
}

TEST_F(AuthorizerTest, PrefixedAllowWithLiteralDeny) {
  Use({Acl("app-", PatternType::kPrefixed, "User:alice", AclOperation::kWrite),
       Deny("app-secret", "User:alice", AclOperation::kWrite)});
  EXPECT_TRUE(Allowed(kAlice, AclOperation::kWrite, "app-orders"));
  EXPECT_TRUE(Allowed(kAlice, AclOperation::kWrite, "app-"));
  AuthorizationResult r = Check(kAlice, AclOperation::kWrite, "app-secret");
  EXPECT_FALSE(r.allowed);
  EXPECT_EQ(r.reason.rfind("DENY rule", 0), 0u) << r.reason;
  EXPECT_TRUE(Allowed(kAlice, AclOperation::kWrite, "app-secret2"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kWrite, "app"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kWrite, "other"));
}

TEST_F(AuthorizerTest, ManyPrefixesAreAllFound) {
  // Prefixes interleaved with non-prefix keys that sort between them.
  Use({Acl("a", PatternType::kPrefixed, "User:bob", AclOperation::kRead),
       Acl("ab", PatternType::kPrefixed, "User:bob", AclOperation::kRead),
       Acl("abb", PatternType::kPrefixed, "User:bob", AclOperation::kRead),
       Acl("abc", PatternType::kPrefixed, "User:alice", AclOperation::kRead),
       Acl("abcd", PatternType::kPrefixed, "User:bob", AclOperation::kRead),
       Acl("abcdf", PatternType::kPrefixed, "User:bob", AclOperation::kRead),
       Acl("abce", PatternType::kPrefixed, "User:bob", AclOperation::kRead)});
  EXPECT_TRUE(Allowed(kAlice, AclOperation::kRead, "abcdef"));
  EXPECT_TRUE(Allowed(kAlice, AclOperation::kRead, "abc"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kRead, "abb"));
  std::vector<std::string> seen;
  snapshot_.ForEachMatching(ResourceType::kTopic, "abcdef", [&](const AclBinding& b) {
    seen.push_back(b.pattern.name);
    return true;
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"abcd", "abc", "ab", "a"}));
}

TEST_F(AuthorizerTest, DenyWinsOverAllow) {
  Use({Allow("t", "User:alice", AclOperation::kRead), Deny("*", "User:*", AclOperation::kRead),
       Allow("u", "User:alice", AclOperation::kAll), Deny("u", "User:alice", AclOperation::kAll)});
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kRead, "t"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kWrite, "u"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kDescribe, "u"));
}

TEST_F(AuthorizerTest, AllowImpliesDescribeButNotTheReverse) {
  for (AclOperation op :
       {AclOperation::kRead, AclOperation::kWrite, AclOperation::kDelete, AclOperation::kAlter}) {
    Use({Allow("t", "User:alice", op)});
    EXPECT_TRUE(Allowed(kAlice, AclOperation::kDescribe, "t")) << AclOperationName(op);
  }
  Use({Allow("t", "User:alice", AclOperation::kCreate)});
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kDescribe, "t"));
  Use({Allow("t", "User:alice", AclOperation::kAlterConfigs)});
  EXPECT_TRUE(Allowed(kAlice, AclOperation::kDescribeConfigs, "t"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kDescribe, "t"));
  Use({Allow("t", "User:alice", AclOperation::kDescribe)});
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kRead, "t"));
  Use({Allow("t", "User:alice", AclOperation::kDescribeConfigs)});
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kAlterConfigs, "t"));
  // A DENY for READ does not deny DESCRIBE.
  Use({Allow("t", "User:alice", AclOperation::kDescribe),
       Deny("t", "User:alice", AclOperation::kRead)});
  EXPECT_TRUE(Allowed(kAlice, AclOperation::kDescribe, "t"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kRead, "t"));
}

TEST_F(AuthorizerTest, AllCoversEveryOperation) {
  Use({Allow("t", "User:alice", AclOperation::kAll)});
  for (AclOperation op : {AclOperation::kRead, AclOperation::kWrite, AclOperation::kDescribe,
                          AclOperation::kAlterConfigs, AclOperation::kIdempotentWrite}) {
    EXPECT_TRUE(Allowed(kAlice, op, "t")) << AclOperationName(op);
  }
}

TEST_F(AuthorizerTest, NoAclFoundUsesAllowEveryone) {
  Use({Allow("other", "User:bob", AclOperation::kRead)});
  AuthorizationResult r = Check(kAlice, AclOperation::kRead, "t");
  EXPECT_FALSE(r.allowed);
  EXPECT_EQ(r.reason, "no ACL found and allow.everyone.if.no.acl.found=false");
  settings_.allow_everyone_if_no_acl_found = true;
  r = Check(kAlice, AclOperation::kRead, "t");
  EXPECT_TRUE(r.allowed);
  EXPECT_EQ(r.reason, "no ACL found and allow.everyone.if.no.acl.found=true");
  Use({});
  EXPECT_TRUE(Allowed(kAlice, AclOperation::kWrite, "t"));
}

TEST_F(AuthorizerTest, AnAclForAnotherPrincipalMakesTheResourceFound) {
  settings_.allow_everyone_if_no_acl_found = true;
  Use({Allow("t", "User:bob", AclOperation::kRead),
       Acl("p-", PatternType::kPrefixed, "User:bob", AclOperation::kRead)});
  EXPECT_TRUE(Allowed(kBob, AclOperation::kRead, "t"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kRead, "t"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kWrite, "t"));
  EXPECT_FALSE(Allowed(kAlice, AclOperation::kRead, "p-1"));
  EXPECT_TRUE(Allowed(kAlice, AclOperation::kRead, "q"));
}

TEST_F(AuthorizerTest, AuthorizeAnyNeedsSomeAllowedResource) {
  EXPECT_FALSE(Any(kAlice, AclOperation::kWrite));
  Use({Allow("t", "User:alice", AclOperation::kWrite)});
  EXPECT_TRUE(Any(kAlice, AclOperation::kWrite));
  EXPECT_FALSE(Any(kAlice, AclOperation::kRead));
  EXPECT_FALSE(Any(kBob, AclOperation::kWrite));
  EXPECT_FALSE(Any(kAlice, AclOperation::kWrite, ResourceType::kGroup));
  // Implied operations do not count here, as in Kafka.
  EXPECT_FALSE(Any(kAlice, AclOperation::kDescribe));
  EXPECT_FALSE(Any(kAlice, AclOperation::kAny));
  EXPECT_FALSE(Any(kAlice, AclOperation::kWrite, ResourceType::kAny));
}

TEST_F(AuthorizerTest, AuthorizeAnyWeighsDenies) {
  // A literal DENY on the same name cancels a literal ALLOW.
  Use({Allow("t", "User:alice", AclOperation::kWrite),
       Deny("t", "User:alice", AclOperation::kAll)});
  EXPECT_FALSE(Any(kAlice, AclOperation::kWrite));
  // A prefixed DENY covering the allowed name cancels it; one that does not, does not.
  Use({Allow("app-x", "User:alice", AclOperation::kWrite),
       Acl("app-", PatternType::kPrefixed, "User:*", AclOperation::kWrite, AclPermission::kDeny)});
  EXPECT_FALSE(Any(kAlice, AclOperation::kWrite));
  Use({Acl("app-", PatternType::kPrefixed, "User:alice", AclOperation::kWrite),
       Acl("app-x", PatternType::kPrefixed, "User:alice", AclOperation::kWrite,
           AclPermission::kDeny)});
  EXPECT_TRUE(Any(kAlice, AclOperation::kWrite));
  // A literal DENY does not cancel a prefixed ALLOW of the same name.
  Use({Acl("app-", PatternType::kPrefixed, "User:alice", AclOperation::kWrite),
       Deny("app-", "User:alice", AclOperation::kWrite)});
  EXPECT_TRUE(Any(kAlice, AclOperation::kWrite));
  // A wildcard ALLOW is enough; a wildcard DENY ends it.
  Use({Allow("*", "User:*", AclOperation::kWrite)});
  EXPECT_TRUE(Any(kAlice, AclOperation::kWrite));
  Use({Allow("*", "User:*", AclOperation::kWrite), Allow("t", "User:alice", AclOperation::kWrite),
       Deny("*", "User:alice", AclOperation::kWrite)});
  EXPECT_FALSE(Any(kAlice, AclOperation::kWrite));
  // Rules from another host do not count.
  Use({Acl("t", PatternType::kLiteral, "User:alice", AclOperation::kWrite, AclPermission::kAllow,
           "10.9.9.9")});
  EXPECT_FALSE(Any(kAlice, AclOperation::kWrite));
}

TEST_F(AuthorizerTest, AuthorizeAnyWithAllowEveryone) {
  settings_.allow_everyone_if_no_acl_found = true;
  EXPECT_TRUE(Any(kAlice, AclOperation::kWrite));
  // A DENY on one topic leaves others open.
  Use({Deny("t", "User:*", AclOperation::kAll)});
  EXPECT_TRUE(Any(kAlice, AclOperation::kRead));
  Use({Deny("t", "User:*", AclOperation::kAll), Deny("*", "User:*", AclOperation::kAll)});
  EXPECT_FALSE(Any(kAlice, AclOperation::kRead));
}

TEST_F(AuthorizerTest, ManyBindingsManyQueries) {
  std::vector<AclBinding> bindings;
  for (int i = 0; i < 10000; ++i) {
    std::string user = "User:u" + std::to_string(i % 100);
    if (i % 3 == 0) {
      bindings.push_back(
          Acl("svc" + std::to_string(i) + "-", PatternType::kPrefixed, user, AclOperation::kRead));
    } else {
      bindings.push_back(Allow("topic-" + std::to_string(i), user, AclOperation::kWrite));
    }
  }
  Use(std::move(bindings));
  int allowed = 0;
  for (int q = 0; q < 100000; ++q) {
    int i = q % 10000;
    KafkaPrincipal who{"User", std::string("u").append(std::to_string(q % 100))};
    std::string name(i % 3 == 0 ? "svc" : "topic-");
    name.append(std::to_string(i));
    if (i % 3 == 0) name.append("-part").append(std::to_string(q));
    AclOperation op = i % 3 == 0 ? AclOperation::kRead : AclOperation::kWrite;
    allowed += Allowed(who, op, name) ? 1 : 0;
  }
  EXPECT_EQ(allowed, 100000);  // q % 100 == i % 100, so every query names its own rule
}

}  // namespace
}  // namespace strata::security
