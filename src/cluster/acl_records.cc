#include "cluster/acl_records.h"

#include <nlohmann/json.hpp>

namespace strata::cluster {

std::string EncodeResourceAcls(const ResourceAcls& acls) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : acls.entries) {
    entries.push_back({{"principal", e.principal},
                       {"host", e.host},
                       {"operation", static_cast<int>(e.operation)},
                       {"permission", static_cast<int>(e.permission)}});
  }
  return nlohmann::json{{"resource_type", static_cast<int>(acls.pattern.type)},
                        {"pattern_type", static_cast<int>(acls.pattern.pattern)},
                        {"name", acls.pattern.name},
                        {"acls", entries}}
      .dump();
}

Result<ResourceAcls> DecodeResourceAcls(const std::string& json) {
  try {
    auto j = nlohmann::json::parse(json);
    ResourceAcls out;
    out.pattern.type = static_cast<security::ResourceType>(j.at("resource_type").get<int>());
    out.pattern.pattern = static_cast<security::PatternType>(j.at("pattern_type").get<int>());
    out.pattern.name = j.at("name").get<std::string>();
    for (const auto& e : j.at("acls")) {
      out.entries.push_back({e.at("principal").get<std::string>(), e.at("host").get<std::string>(),
                             static_cast<security::AclOperation>(e.at("operation").get<int>()),
                             static_cast<security::AclPermission>(e.at("permission").get<int>())});
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    return MakeError(Errc::kCorrupt, std::string("ACL record: ") + e.what());
  }
}

}  // namespace strata::cluster
