// KafkaPrincipal's string form and parser.
#include "security/principal.h"

#include <string>

namespace strata::security {

std::string KafkaPrincipal::ToString() const {
  std::string out;
  out.reserve(type.size() + 1 + name.size());
  out.append(type).append(":").append(name);
  return out;
}

KafkaPrincipal KafkaPrincipal::Anonymous() { return KafkaPrincipal{"User", "ANONYMOUS"}; }

Result<KafkaPrincipal> ParsePrincipal(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return MakeError(Errc::kInvalidArgument,
                     "expected a string in format principalType:principalName but got '" +
                         std::string(text) + "'");
  }
  std::string_view type = text.substr(0, colon);
  std::string_view name = text.substr(colon + 1);
  if (type.empty() || name.empty()) {
    return MakeError(Errc::kInvalidArgument,
                     "principal '" + std::string(text) + "' has an empty type or name");
  }
  return KafkaPrincipal{std::string(type), std::string(name)};
}

}  // namespace strata::security
