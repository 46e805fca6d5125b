#include "broker/quota/client_quota_entity.h"

#include <tuple>

namespace strata::broker {

namespace quota_entity_impl {

// Kafka's ClientQuotaManager quotaTypesEnabled bits.
constexpr unsigned kClientIdLevel = 1;
constexpr unsigned kUserLevel = 2;
constexpr unsigned kUserClientIdLevel = 4;

const std::optional<std::string> kUnnamed;

// The fields that identify an entity: a name is ignored when its type is absent.
auto Key(const ClientQuotaEntity& e) {
  return std::tie(e.has_user, e.has_user ? e.user : kUnnamed, e.has_client_id,
                  e.has_client_id ? e.client_id : kUnnamed);
}

std::string NamePart(const std::optional<std::string>& name) {
  return name ? *name : std::string("<default>");
}

// An entity naming a user (nullopt: <default>) and/or a client id.
ClientQuotaEntity UserClient(std::optional<std::string> user, std::optional<std::string> client) {
  return {std::move(user), true, std::move(client), true};
}
ClientQuotaEntity UserOnly(std::optional<std::string> user) {
  return {std::move(user), true, std::nullopt, false};
}
ClientQuotaEntity ClientOnly(std::optional<std::string> client) {
  return {std::nullopt, false, std::move(client), true};
}

}  // namespace quota_entity_impl

bool ClientQuotaEntity::operator==(const ClientQuotaEntity& o) const {
  return quota_entity_impl::Key(*this) == quota_entity_impl::Key(o);
}

bool ClientQuotaEntity::operator<(const ClientQuotaEntity& o) const {
  return quota_entity_impl::Key(*this) < quota_entity_impl::Key(o);
}

std::string ClientQuotaEntity::ToString() const {
  std::string out;
  if (has_user) out = "user=" + quota_entity_impl::NamePart(user);
  if (has_client_id) {
    if (!out.empty()) out += ",";
    out += "client-id=" + quota_entity_impl::NamePart(client_id);
  }
  return out;
}

const char* QuotaConfigKey(QuotaType type) {
  switch (type) {
    case QuotaType::kProduce:
      return "producer_byte_rate";
    case QuotaType::kFetch:
      return "consumer_byte_rate";
    case QuotaType::kRequest:
      return "request_percentage";
  }
  return "unknown";
}

std::optional<double> QuotaValueOf(const QuotaValues& values, QuotaType type) {
  switch (type) {
    case QuotaType::kProduce:
      return values.producer_byte_rate;
    case QuotaType::kFetch:
      return values.consumer_byte_rate;
    case QuotaType::kRequest:
      return values.request_percentage;
  }
  return std::nullopt;
}

bool QuotaMetricTags::operator<(const QuotaMetricTags& o) const {
  return std::tie(user, client_id) < std::tie(o.user, o.client_id);
}

QuotasOfType::QuotasOfType(const QuotaConfigs& configs, QuotaType type) {
  using namespace quota_entity_impl;
  for (const auto& [entity, values] : configs) {
    std::optional<double> bound = QuotaValueOf(values, type);
    if (!bound || (!entity.has_user && !entity.has_client_id)) continue;
    // Normalise: a name without its type is dropped, so lookups compare equal.
    ClientQuotaEntity key{entity.has_user ? entity.user : std::nullopt, entity.has_user,
                          entity.has_client_id ? entity.client_id : std::nullopt,
                          entity.has_client_id};
    bounds_[key] = *bound;
    levels_ |= entity.has_user && entity.has_client_id ? kUserClientIdLevel
               : entity.has_user                       ? kUserLevel
                                                       : kClientIdLevel;
  }
}

bool QuotasOfType::Has(ClientQuotaEntity entity) const { return bounds_.count(entity) > 0; }

std::optional<ResolvedQuota> QuotasOfType::Find(ClientQuotaEntity entity) const {
  auto it = bounds_.find(entity);
  if (it == bounds_.end()) return std::nullopt;
  return ResolvedQuota{it->second, it->first};
}

QuotaMetricTags QuotasOfType::MetricTags(const std::string& user,
                                         const std::string& client_id) const {
  using namespace quota_entity_impl;
  // Only one level configured: every client of that level shares the same tag
  // shape, whether or not a quota matches it (Kafka's fast path).
  switch (levels_) {
    case 0:
    case kClientIdLevel:
      return {"", client_id};
    case kUserLevel:
      return {user, ""};
    case kUserClientIdLevel:
      return {user, client_id};
    default:
      break;
  }
  // Several levels: the tags of the first level in the precedence that is set.
  if (Has(UserClient(user, client_id)) || Has(UserClient(user, std::nullopt))) {
    return {user, client_id};
  }
  if (Has(UserOnly(user))) return {user, ""};
  if (Has(UserClient(std::nullopt, client_id)) || Has(UserClient(std::nullopt, std::nullopt))) {
    return {user, client_id};
  }
  if (Has(UserOnly(std::nullopt))) return {user, ""};
  return {"", client_id};
}

std::optional<ResolvedQuota> QuotasOfType::ForTags(const QuotaMetricTags& tags) const {
  using namespace quota_entity_impl;
  std::optional<ResolvedQuota> found;
  if (!tags.user.empty() && !tags.client_id.empty()) {
    if (!(found = Find(UserClient(tags.user, tags.client_id))) &&
        !(found = Find(UserClient(tags.user, std::nullopt))) &&
        !(found = Find(UserClient(std::nullopt, tags.client_id)))) {
      found = Find(UserClient(std::nullopt, std::nullopt));
    }
  } else if (!tags.user.empty()) {
    if (!(found = Find(UserOnly(tags.user)))) found = Find(UserOnly(std::nullopt));
  } else if (!tags.client_id.empty()) {
    if (!(found = Find(ClientOnly(tags.client_id)))) found = Find(ClientOnly(std::nullopt));
  }
  return found;
}

std::optional<ResolvedQuota> QuotasOfType::Resolve(const std::string& user,
                                                   const std::string& client_id) const {
  return ForTags(MetricTags(user, client_id));
}

std::optional<ResolvedQuota> ResolveQuota(const QuotaConfigs& configs, QuotaType type,
                                          const std::string& user, const std::string& client_id) {
  return QuotasOfType(configs, type).Resolve(user, client_id);
}

}  // namespace strata::broker
