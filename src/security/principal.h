#pragma once
// KafkaPrincipal: who a connection acts as, in the "Type:name" form that ACLs,
// quotas and the audit log name it by ("User:alice"). Built by the SASL
// mechanisms (the authorization id) and by the SSL principal mapper (the
// certificate's subject); User:ANONYMOUS when a connection did not
// authenticate. A plain value type, safe to copy across threads.
#include <string>
#include <string_view>

#include "base/result.h"

namespace strata::security {

struct KafkaPrincipal {
  std::string type = "User";
  std::string name;

  // "User:alice", the form ACL bindings and DescribeAcls use.
  std::string ToString() const;
  bool operator==(const KafkaPrincipal&) const = default;

  // Kafka's KafkaPrincipal.ANONYMOUS: PLAINTEXT connections, SSL without a
  // client certificate.
  static KafkaPrincipal Anonymous();
};

// "User:alice" -> {User, alice}. Splits at the first colon, so names may hold
// colons ("User:CN=a:b"). kInvalidArgument when there is no colon or the type
// or name is empty.
Result<KafkaPrincipal> ParsePrincipal(std::string_view text);

}  // namespace strata::security
