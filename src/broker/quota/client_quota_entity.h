#pragma once
// Kafka client quotas as configured (KIP-13, KIP-55, KIP-124): which entity a
// quota is set on, the values it sets, and how a connection's (user,
// client-id) finds the quota that applies to it. Pure functions of a config
// snapshot the caller supplies; no I/O, no clock.
//
// Precedence (KIP-55), first match wins, per quota type (an entity that sets
// only other keys is skipped, as Kafka keeps one quota map per manager):
//   1 /users/<user>/clients/<client-id>
//   2 /users/<user>/clients/<default>
//   3 /users/<user>
//   4 /users/<default>/clients/<client-id>
//   5 /users/<default>/clients/<default>
//   6 /users/<default>
//   7 /clients/<client-id>
//   8 /clients/<default>
// As in Kafka's default quota callback (ClientQuotaManager.DefaultQuotaCallback)
// the lookup goes through the sensor's metric tags (QuotaMetricTags): a client
// is first mapped to tags, and the tags to a quota. With non-empty names this
// is exactly the list above; with an empty client id only levels 3 and 6 can
// match, with an empty user only 7 and 8 (Kafka's quotaLimit reads an empty
// tag as "not this level").
//
// Thread-safety: values; QuotasOfType is immutable once built.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace strata::broker {

// One entity of a client quota. has_x false: the entity does not name that
// type (its name is then ignored); has_x true with a nullopt name: the default
// entity of that type (kafka-configs --entity-default, a null name in Kafka's
// ClientQuotaEntity).
struct ClientQuotaEntity {
  std::optional<std::string> user;
  bool has_user = false;
  std::optional<std::string> client_id;
  bool has_client_id = false;

  bool operator==(const ClientQuotaEntity& o) const;
  bool operator<(const ClientQuotaEntity& o) const;
  // "user=alice,client-id=<default>", "user=<default>", "client-id=app".
  std::string ToString() const;
};

// The quota keys one entity sets (absent: not set on this entity).
struct QuotaValues {
  std::optional<double> producer_byte_rate, consumer_byte_rate, request_percentage,
      controller_mutation_rate;
};

using QuotaConfigs = std::map<ClientQuotaEntity, QuotaValues>;

enum class QuotaType { kProduce, kFetch, kRequest };

// "producer_byte_rate", "consumer_byte_rate", "request_percentage".
const char* QuotaConfigKey(QuotaType type);
// The value `values` sets for `type`, if any.
std::optional<double> QuotaValueOf(const QuotaValues& values, QuotaType type);

// The quota that applies and the entity it was set on.
struct ResolvedQuota {
  double bound;
  ClientQuotaEntity entity;
};

// Kafka's quota metric tags (KIP-257's ClientQuotaCallback.quotaMetricTags):
// clients with equal tags share one rate sensor.
// Which tags a client gets depends on the levels configured: with quotas on
// /users/<default> only, each user has its own sensor (tags user, ""); with
// /clients/<default> only, each client id ("", client-id); a <user, client-id>
// level gives each pair its own.
struct QuotaMetricTags {
  std::string user;
  std::string client_id;

  bool operator==(const QuotaMetricTags& o) const = default;
  bool operator<(const QuotaMetricTags& o) const;
};

// The quotas of one type out of a QuotaConfigs snapshot.
class QuotasOfType {
 public:
  QuotasOfType() = default;
  QuotasOfType(const QuotaConfigs& configs, QuotaType type);

  // No entity sets this type (Kafka's quotasEnabled() is false).
  bool empty() const { return bounds_.empty(); }
  // Kafka's DefaultQuotaCallback.quotaMetricTags.
  QuotaMetricTags MetricTags(const std::string& user, const std::string& client_id) const;
  // Kafka's DefaultQuotaCallback.quotaLimit: the quota for a sensor's tags.
  std::optional<ResolvedQuota> ForTags(const QuotaMetricTags& tags) const;
  // ForTags(MetricTags(user, client_id)).
  std::optional<ResolvedQuota> Resolve(const std::string& user, const std::string& client_id) const;

 private:
  std::optional<ResolvedQuota> Find(ClientQuotaEntity entity) const;
  bool Has(ClientQuotaEntity entity) const;

  std::map<ClientQuotaEntity, double> bounds_;
  unsigned levels_ =
      0;  // which of user, client-id, <user, client-id> are set (Kafka's quotaTypesEnabled)
};

// The quota of `type` for a connection of `user` with `client_id`, following
// the precedence above; nullopt when none applies.
std::optional<ResolvedQuota> ResolveQuota(const QuotaConfigs& configs, QuotaType type,
                                          const std::string& user, const std::string& client_id);

}  // namespace strata::broker
