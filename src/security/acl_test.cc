// Kafka's ACL model: codes, names, filter matching and CreateAcls checks.
#include "security/acl.h"

#include <gtest/gtest.h>

#include <vector>

namespace strata::security {
namespace {

AclBinding Binding(ResourceType type, std::string name, PatternType pattern,
                   std::string principal = "User:alice", std::string host = "*",
                   AclOperation op = AclOperation::kRead,
                   AclPermission perm = AclPermission::kAllow) {
  return AclBinding{{type, std::move(name), pattern},
                    {std::move(principal), std::move(host), op, perm}};
}

TEST(AclTest, CodesMapOutOfRangeToUnknown) {
  EXPECT_EQ(ResourceTypeFromCode(2), ResourceType::kTopic);
  EXPECT_EQ(ResourceTypeFromCode(7), ResourceType::kUser);
  EXPECT_EQ(ResourceTypeFromCode(8), ResourceType::kUnknown);
  EXPECT_EQ(ResourceTypeFromCode(-1), ResourceType::kUnknown);
  EXPECT_EQ(PatternTypeFromCode(4), PatternType::kPrefixed);
  EXPECT_EQ(PatternTypeFromCode(5), PatternType::kUnknown);
  EXPECT_EQ(AclOperationFromCode(15), AclOperation::kTwoPhaseCommit);
  EXPECT_EQ(AclOperationFromCode(12), AclOperation::kIdempotentWrite);
  EXPECT_EQ(AclOperationFromCode(16), AclOperation::kUnknown);
  EXPECT_EQ(AclOperationFromCode(-128), AclOperation::kUnknown);
  EXPECT_EQ(AclPermissionFromCode(3), AclPermission::kAllow);
  EXPECT_EQ(AclPermissionFromCode(4), AclPermission::kUnknown);
}

TEST(AclTest, NamesAsKafkaPrintsThem) {
  EXPECT_STREQ(ResourceTypeEnumName(ResourceType::kTransactionalId), "TRANSACTIONAL_ID");
  EXPECT_STREQ(ResourceTypeName(ResourceType::kTransactionalId), "TransactionalId");
  EXPECT_STREQ(ResourceTypeName(ResourceType::kDelegationToken), "DelegationToken");
  EXPECT_STREQ(ResourceTypeName(ResourceType::kTopic), "Topic");
  EXPECT_STREQ(PatternTypeName(PatternType::kPrefixed), "PREFIXED");
  EXPECT_STREQ(AclOperationName(AclOperation::kIdempotentWrite), "IDEMPOTENT_WRITE");
  EXPECT_STREQ(AclOperationName(AclOperation::kDescribeConfigs), "DESCRIBE_CONFIGS");
  EXPECT_STREQ(AclOperationName(AclOperation::kTwoPhaseCommit), "TWO_PHASE_COMMIT");
  EXPECT_STREQ(AclOperationName(static_cast<AclOperation>(42)), "UNKNOWN");
  EXPECT_STREQ(AclPermissionName(AclPermission::kDeny), "DENY");

  AclBinding b = Binding(ResourceType::kTopic, "t", PatternType::kLiteral);
  EXPECT_EQ(b.pattern.ToString(),
            "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)");
  EXPECT_EQ(b.entry.ToString(),
            "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)");
  EXPECT_EQ(b.ToString(),
            "(pattern=ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL), "
            "entry=(principal=User:alice, host=*, operation=READ, permissionType=ALLOW))");
}

TEST(AclTest, PatternsCompare) {
  ResourcePattern a{ResourceType::kTopic, "a", PatternType::kLiteral};
  ResourcePattern b{ResourceType::kTopic, "b", PatternType::kLiteral};
  ResourcePattern g{ResourceType::kGroup, "a", PatternType::kLiteral};
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(a < g);  // by type first
  EXPECT_EQ(a, (ResourcePattern{ResourceType::kTopic, "a", PatternType::kLiteral}));
  EXPECT_NE(a, (ResourcePattern{ResourceType::kTopic, "a", PatternType::kPrefixed}));
}

TEST(AclFilterTest, DefaultMatchesEverything) {
  AclBindingFilter any;
  EXPECT_TRUE(any.Matches(Binding(ResourceType::kTopic, "t", PatternType::kLiteral)));
  EXPECT_TRUE(any.Matches(Binding(ResourceType::kGroup, "g", PatternType::kPrefixed, "User:bob",
                                  "10.0.0.1", AclOperation::kAll, AclPermission::kDeny)));
  EXPECT_FALSE(any.Invalid().has_value());
}

TEST(AclFilterTest, LiteralAndPrefixedSelectThatTypeAndExactName) {
  AclBindingFilter f;
  f.resource_type = ResourceType::kTopic;
  f.name = "foo";
  f.pattern_type = PatternType::kLiteral;
  EXPECT_TRUE(f.Matches(Binding(ResourceType::kTopic, "foo", PatternType::kLiteral)));
  EXPECT_FALSE(f.Matches(Binding(ResourceType::kTopic, "foo", PatternType::kPrefixed)));
  EXPECT_FALSE(f.Matches(Binding(ResourceType::kTopic, "*", PatternType::kLiteral)));
  EXPECT_FALSE(f.Matches(Binding(ResourceType::kGroup, "foo", PatternType::kLiteral)));
  f.pattern_type = PatternType::kPrefixed;
  EXPECT_TRUE(f.Matches(Binding(ResourceType::kTopic, "foo", PatternType::kPrefixed)));
  EXPECT_FALSE(f.Matches(Binding(ResourceType::kTopic, "fo", PatternType::kPrefixed)));
  EXPECT_FALSE(f.Matches(Binding(ResourceType::kTopic, "foo", PatternType::kLiteral)));
}

TEST(AclFilterTest, WildcardNameSelectsOnlyWildcardBindings) {
  AclBindingFilter f;
  f.name = "*";
  f.pattern_type = PatternType::kLiteral;
  EXPECT_TRUE(f.Matches(Binding(ResourceType::kTopic, "*", PatternType::kLiteral)));
  EXPECT_FALSE(f.Matches(Binding(ResourceType::kTopic, "foo", PatternType::kLiteral)));
}

TEST(AclFilterTest, AnyPatternTypeMatchesExactNameOfEveryType) {
  AclBindingFilter f;
  f.name = "foo";
  EXPECT_TRUE(f.Matches(Binding(ResourceType::kTopic, "foo", PatternType::kLiteral)));
  EXPECT_TRUE(f.Matches(Binding(ResourceType::kTopic, "foo", PatternType::kPrefixed)));
  EXPECT_FALSE(f.Matches(Binding(ResourceType::kTopic, "*", PatternType::kLiteral)));
  EXPECT_FALSE(f.Matches(Binding(ResourceType::kTopic, "fo", PatternType::kPrefixed)));
}

TEST(AclFilterTest, MatchSelectsThePatternsThatApplyToTheName) {
  AclBindingFilter f;
  f.resource_type = ResourceType::kTopic;
  f.name = "foobar";
  f.pattern_type = PatternType::kMatch;
  EXPECT_TRUE(f.Matches(Binding(ResourceType::kTopic, "foobar", PatternType::kLiteral)));
  EXPECT_TRUE(f.Matches(Binding(ResourceType::kTopic, "*", PatternType::kLiteral)));
  EXPECT_TRUE(f.Matches(Binding(ResourceType::kTopic, "foo", PatternType::kPrefixed)));
  EXPECT_TRUE(f.Matches(Binding(ResourceType::kTopic, "foobar", PatternType::kPrefixed)));
  EXPECT_FALSE(f.Matches(Binding(ResourceType::kTopic, "foobarbaz", PatternType::kPrefixed)));
  EXPECT_FALSE(f.Matches(Binding(ResourceType::kTopic, "foo", PatternType::kLiteral)));
  EXPECT_FALSE(f.Matches(Binding(ResourceType::kTopic, "*", PatternType::kPrefixed)));
  EXPECT_FALSE(f.Matches(Binding(ResourceType::kGroup, "foobar", PatternType::kLiteral)));
  f.name.reset();  // MATCH without a name: every pattern
  EXPECT_TRUE(f.Matches(Binding(ResourceType::kTopic, "x", PatternType::kPrefixed)));
  EXPECT_TRUE(f.Matches(Binding(ResourceType::kTopic, "y", PatternType::kLiteral)));
  EXPECT_FALSE(f.Invalid().has_value());
}

TEST(AclFilterTest, EntryFields) {
  AclBinding b = Binding(ResourceType::kTopic, "t", PatternType::kLiteral, "User:alice", "10.0.0.1",
                         AclOperation::kWrite, AclPermission::kDeny);
  AclBindingFilter f;
  f.principal = "User:alice";
  EXPECT_TRUE(f.Matches(b));
  f.principal = "User:*";  // a filter's principal is compared as written
  EXPECT_FALSE(f.Matches(b));
  f.principal.reset();
  f.host = "10.0.0.1";
  EXPECT_TRUE(f.Matches(b));
  f.host = "*";
  EXPECT_FALSE(f.Matches(b));
  f.host.reset();
  f.operation = AclOperation::kWrite;
  EXPECT_TRUE(f.Matches(b));
  f.operation = AclOperation::kAll;  // ALL in a filter is the operation ALL, not "any"
  EXPECT_FALSE(f.Matches(b));
  f.operation = AclOperation::kAny;
  f.permission = AclPermission::kAllow;
  EXPECT_FALSE(f.Matches(b));
  f.permission = AclPermission::kDeny;
  EXPECT_TRUE(f.Matches(b));
}

TEST(AclFilterTest, UnknownFieldsAreInvalid) {
  for (int i = 0; i < 4; ++i) {
    AclBindingFilter f;
    if (i == 0) f.resource_type = ResourceType::kUnknown;
    if (i == 1) f.pattern_type = PatternType::kUnknown;
    if (i == 2) f.operation = AclOperation::kUnknown;
    if (i == 3) f.permission = AclPermission::kUnknown;
    EXPECT_TRUE(f.Invalid().has_value()) << i;
  }
}

TEST(AclCreateTest, AcceptsConcreteBindingsIncludingAll) {
  EXPECT_EQ(InvalidForCreate(Binding(ResourceType::kTopic, "t", PatternType::kLiteral)),
            std::nullopt);
  EXPECT_EQ(InvalidForCreate(Binding(ResourceType::kGroup, "app-", PatternType::kPrefixed, "User:*",
                                     "*", AclOperation::kAll, AclPermission::kDeny)),
            std::nullopt);
  EXPECT_EQ(InvalidForCreate(Binding(ResourceType::kCluster, "kafka-cluster", PatternType::kLiteral,
                                     "User:bob", "10.0.0.1", AclOperation::kClusterAction)),
            std::nullopt);
}

TEST(AclCreateTest, RefusesWhatKafkaRefuses) {
  std::vector<AclBinding> bad = {
      Binding(ResourceType::kUnknown, "t", PatternType::kLiteral),
      Binding(ResourceType::kAny, "t", PatternType::kLiteral),
      Binding(ResourceType::kTopic, "t", PatternType::kAny),
      Binding(ResourceType::kTopic, "t", PatternType::kMatch),
      Binding(ResourceType::kTopic, "t", PatternType::kUnknown),
      Binding(ResourceType::kTopic, "", PatternType::kLiteral),
      Binding(ResourceType::kTopic, "t", PatternType::kLiteral, "User:a", "*", AclOperation::kAny),
      Binding(ResourceType::kTopic, "t", PatternType::kLiteral, "User:a", "*",
              AclOperation::kUnknown),
      Binding(ResourceType::kTopic, "t", PatternType::kLiteral, "User:a", "*", AclOperation::kRead,
              AclPermission::kAny),
      Binding(ResourceType::kTopic, "t", PatternType::kLiteral, "User:a", "*", AclOperation::kRead,
              AclPermission::kUnknown),
      Binding(ResourceType::kTopic, "t", PatternType::kLiteral, "alice"),
      Binding(ResourceType::kTopic, "t", PatternType::kLiteral, "User:"),
      Binding(ResourceType::kCluster, "my-cluster", PatternType::kLiteral),
  };
  for (const AclBinding& b : bad) EXPECT_TRUE(InvalidForCreate(b).has_value()) << b.ToString();
  EXPECT_EQ(*InvalidForCreate(Binding(ResourceType::kCluster, "c", PatternType::kLiteral)),
            "The only valid name for the CLUSTER resource is kafka-cluster");
  EXPECT_EQ(*InvalidForCreate(Binding(ResourceType::kTopic, "t", PatternType::kMatch)),
            "Invalid patternType MATCH");
}

}  // namespace
}  // namespace strata::security
