#pragma once
// The ACLs of one resource pattern as the metadata store keeps them
// (`<p>/acls/<resource type>/<pattern type>/<name>`, the types as Kafka's
// int8 codes): every broker's authorizer reads them from its view, so an ACL
// created or deleted through any broker applies on all of them at once.
#include <string>
#include <vector>

#include "base/result.h"
#include "security/acl.h"

namespace strata::cluster {

struct ResourceAcls {
  security::ResourcePattern pattern;
  std::vector<security::AccessControlEntry> entries;
};

// JSON: {"resource_type": 2, "pattern_type": 3, "name": "orders", "acls":
// [{"principal": "User:alice", "host": "*", "operation": 4, "permission": 3}]}
std::string EncodeResourceAcls(const ResourceAcls& acls);
Result<ResourceAcls> DecodeResourceAcls(const std::string& json);

}  // namespace strata::cluster
