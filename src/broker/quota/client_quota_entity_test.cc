// Tests of quota resolution: KIP-55's eight levels in order, entities that
// set only other keys skipped per type, and the metric tags (sensor sharing)
// Kafka's default callback gives each level.
#include "broker/quota/client_quota_entity.h"

#include <gtest/gtest.h>

#include <vector>

namespace strata::broker {
namespace {

using Name = std::optional<std::string>;  // nullopt: <default>

ClientQuotaEntity UserClient(Name user, Name client) {
  return {std::move(user), true, std::move(client), true};
}
ClientQuotaEntity User(Name user) { return {std::move(user), true, std::nullopt, false}; }
ClientQuotaEntity Client(Name client) { return {std::nullopt, false, std::move(client), true}; }

QuotaValues Produce(double rate) { return {.producer_byte_rate = rate}; }

// The eight levels for alice/app in precedence order, with bounds 1..8.
std::vector<ClientQuotaEntity> Levels() {
  return {UserClient("alice", "app"),
          UserClient("alice", std::nullopt),
          User("alice"),
          UserClient(std::nullopt, "app"),
          UserClient(std::nullopt, std::nullopt),
          User(std::nullopt),
          Client("app"),
          Client(std::nullopt)};
}

TEST(ClientQuotaEntityTest, ToStringEqualityAndOrder) {
  EXPECT_EQ(UserClient("alice", std::nullopt).ToString(), "user=alice,client-id=<default>");
  EXPECT_EQ(User(std::nullopt).ToString(), "user=<default>");
  EXPECT_EQ(Client("app").ToString(), "client-id=app");
  // A name without its type does not count.
  ClientQuotaEntity stray{"ignored", false, "app", true};
  EXPECT_EQ(stray, Client("app"));
  EXPECT_FALSE(stray < Client("app") || Client("app") < stray);
  EXPECT_FALSE(User("alice") == UserClient("alice", std::nullopt));
  EXPECT_STREQ(QuotaConfigKey(QuotaType::kProduce), "producer_byte_rate");
  EXPECT_STREQ(QuotaConfigKey(QuotaType::kFetch), "consumer_byte_rate");
  EXPECT_STREQ(QuotaConfigKey(QuotaType::kRequest), "request_percentage");
}

TEST(ClientQuotaEntityTest, PrecedenceOverAllEightLevels) {
  QuotaConfigs configs;
  const std::vector<ClientQuotaEntity> levels = Levels();
  for (size_t i = 0; i < levels.size(); ++i) configs[levels[i]] = Produce(double(i + 1));
  // Remove the winning level each time: the next one takes over.
  for (size_t i = 0; i < levels.size(); ++i) {
    std::optional<ResolvedQuota> q = ResolveQuota(configs, QuotaType::kProduce, "alice", "app");
    ASSERT_TRUE(q.has_value()) << "level " << i + 1;
    EXPECT_EQ(q->bound, double(i + 1));
    EXPECT_EQ(q->entity, levels[i]) << q->entity.ToString();
    configs.erase(levels[i]);
  }
  EXPECT_FALSE(ResolveQuota(configs, QuotaType::kProduce, "alice", "app").has_value());
}

TEST(ClientQuotaEntityTest, AnEntityWithoutThisTypesKeyIsSkipped) {
  QuotaConfigs configs;
  configs[UserClient("alice", "app")] = {.consumer_byte_rate = 10};
  configs[User("alice")] = {.producer_byte_rate = 20, .request_percentage = 5};
  configs[Client(std::nullopt)] = {.request_percentage = 50};

  std::optional<ResolvedQuota> produce = ResolveQuota(configs, QuotaType::kProduce, "alice", "app");
  ASSERT_TRUE(produce.has_value());
  EXPECT_EQ(produce->bound, 20);
  EXPECT_EQ(produce->entity, User("alice"));

  std::optional<ResolvedQuota> fetch = ResolveQuota(configs, QuotaType::kFetch, "alice", "app");
  ASSERT_TRUE(fetch.has_value());
  EXPECT_EQ(fetch->entity, UserClient("alice", "app"));

  EXPECT_EQ(ResolveQuota(configs, QuotaType::kRequest, "alice", "app")->bound, 5);
  EXPECT_EQ(ResolveQuota(configs, QuotaType::kRequest, "bob", "app")->bound, 50);
  EXPECT_FALSE(ResolveQuota(configs, QuotaType::kFetch, "bob", "app").has_value());
}

TEST(ClientQuotaEntityTest, DefaultLevelsGiveEachUserOrClientItsOwnTags) {
  QuotaConfigs configs;
  configs[User(std::nullopt)] = Produce(100);
  QuotasOfType users(configs, QuotaType::kProduce);
  EXPECT_EQ(users.MetricTags("alice", "a"), (QuotaMetricTags{"alice", ""}));
  EXPECT_EQ(users.MetricTags("alice", "b"), (QuotaMetricTags{"alice", ""}));
  EXPECT_EQ(users.MetricTags("bob", "a"), (QuotaMetricTags{"bob", ""}));

  configs.clear();
  configs[Client(std::nullopt)] = Produce(100);
  QuotasOfType clients(configs, QuotaType::kProduce);
  EXPECT_EQ(clients.MetricTags("alice", "a"), (QuotaMetricTags{"", "a"}));
  EXPECT_EQ(clients.MetricTags("bob", "a"), (QuotaMetricTags{"", "a"}));

  // Several levels: the tags follow the level that matches.
  configs[UserClient("alice", std::nullopt)] = Produce(10);
  configs[User("bob")] = Produce(20);
  QuotasOfType mixed(configs, QuotaType::kProduce);
  EXPECT_EQ(mixed.MetricTags("alice", "a"), (QuotaMetricTags{"alice", "a"}));
  EXPECT_EQ(mixed.MetricTags("bob", "a"), (QuotaMetricTags{"bob", ""}));
  EXPECT_EQ(mixed.MetricTags("carol", "a"), (QuotaMetricTags{"", "a"}));
  EXPECT_EQ(mixed.Resolve("carol", "a")->bound, 100);
}

// Kafka reads an empty tag as "not this level": an empty client id escapes
// the client-id levels and is only matched by /users/<user> or /users/<default>.
TEST(ClientQuotaEntityTest, AnEmptyClientIdOnlyMatchesUserLevels) {
  QuotaConfigs configs;
  configs[Client(std::nullopt)] = Produce(100);
  EXPECT_FALSE(ResolveQuota(configs, QuotaType::kProduce, "alice", "").has_value());
  configs[UserClient(std::nullopt, std::nullopt)] = Produce(50);
  EXPECT_FALSE(ResolveQuota(configs, QuotaType::kProduce, "alice", "").has_value());
  configs[User(std::nullopt)] = Produce(25);
  EXPECT_EQ(ResolveQuota(configs, QuotaType::kProduce, "alice", "")->bound, 25);
  EXPECT_EQ(ResolveQuota(configs, QuotaType::kProduce, "alice", "app")->bound, 50);
}

}  // namespace
}  // namespace strata::broker
