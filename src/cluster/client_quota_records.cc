#include "cluster/client_quota_records.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace strata::cluster {

namespace {

// Percent-escapes what may not appear in one key component.
std::string EscapeName(const std::string& name) {
  std::string out;
  for (unsigned char c : name) {
    if (c == '/' || c == '%' || c == '=' || c == ',' || c < 0x20) {
      out += fmt::format("%{:02X}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

std::string QuotaEntityKey(QuotaEntity entity) {
  std::sort(entity.begin(), entity.end());
  std::string key;
  for (const auto& [type, name] : entity) {
    if (!key.empty()) key += ",";
    key += EscapeName(type) + "=" + (name ? "n" + EscapeName(*name) : std::string("d"));
  }
  return key;
}

std::string EncodeClientQuota(const ClientQuotaRecord& record) {
  nlohmann::json entity = nlohmann::json::array();
  for (const auto& [type, name] : record.entity) {
    entity.push_back({{"type", type}, {"name", name ? nlohmann::json(*name) : nullptr}});
  }
  return nlohmann::json{{"entity", entity}, {"quotas", record.values}}.dump();
}

Result<ClientQuotaRecord> DecodeClientQuota(const std::string& json) {
  try {
    auto j = nlohmann::json::parse(json);
    ClientQuotaRecord out;
    for (const auto& e : j.at("entity")) {
      std::optional<std::string> name;
      if (!e.at("name").is_null()) name = e.at("name").get<std::string>();
      out.entity.emplace_back(e.at("type").get<std::string>(), std::move(name));
    }
    out.values = j.at("quotas").get<std::map<std::string, double>>();
    return out;
  } catch (const nlohmann::json::exception& e) {
    return MakeError(Errc::kCorrupt, std::string("client quota record: ") + e.what());
  }
}

}  // namespace strata::cluster
