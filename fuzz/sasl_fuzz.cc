// libFuzzer target: hostile SASL tokens as a client or a server sends them
// in SaslAuthenticate. The first byte picks the path: the broker's PLAIN,
// SCRAM (two rounds: the input split at its first 0xFF byte) and OAUTHBEARER
// exchanges, and the client's side of SCRAM reading a server's messages.
// Every path must fail cleanly (an error, never a crash, hang or leak);
// an exchange must never complete on forged input.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "security/jwt.h"
#include "security/oauthbearer.h"
#include "security/sasl_plain.h"
#include "security/scram.h"

namespace strata::security {
namespace {

const ScramCredential& TestCredential() {
  static const ScramCredential c = MakeScramCredential(
      ScramMechanism::kSha256, "pencil", Bytes{1, 2, 3, 4, 5, 6, 7, 8}, kScramMinIterations);
  return c;
}

void FuzzPlain(ByteView token) {
  auto server = MakePlainServer([](std::string_view user) -> std::optional<std::string> {
    if (user == "user") return std::string("pencil");
    return std::nullopt;
  });
  auto r = server->Evaluate(token);
  // Only the one right password may pass.
  const std::string s(token.begin(), token.end());
  if (r.ok() && server->complete() && s.find("pencil") == std::string::npos) __builtin_trap();
}

void FuzzScramServer(ByteView input) {
  size_t split = 0;
  while (split < input.size() && input[split] != 0xFF) ++split;
  auto server = MakeScramServer(ScramMechanism::kSha256,
                                [](std::string_view) { return TestCredential(); });
  if (!server->Evaluate(input.first(split)).ok()) return;
  if (split >= input.size()) return;
  auto r = server->Evaluate(input.subspan(split + 1));
  // A random proof passing would be a forgery.
  if (r.ok() && server->complete()) __builtin_trap();
}

void FuzzScramClient(ByteView input) {
  size_t split = 0;
  while (split < input.size() && input[split] != 0xFF) ++split;
  ScramClient client(ScramMechanism::kSha512, "user", "pencil", std::string("fixednonce"));
  client.FirstMessage();
  const std::string first(input.begin(), input.begin() + static_cast<std::ptrdiff_t>(split));
  if (!client.FinalMessage(first).ok()) return;
  if (split >= input.size()) return;
  const std::string last(input.begin() + static_cast<std::ptrdiff_t>(split) + 1, input.end());
  (void)client.VerifyServerFinal(last);
}

void FuzzOAuthBearer(ByteView input) {
  static const auto keys = std::make_shared<const Jwks>(std::move(Jwks::Parse(
      R"({"keys":[{"kty":"EC","crv":"P-256","kid":"k",)"
      R"("x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",)"
      R"("y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]})")
                                                                .value()));
  auto server = MakeOAuthBearerServer([] { return keys; }, OAuthBearerValidation{},
                                      [] { return int64_t{1700000000000}; });
  auto r = server->Evaluate(input);
  if (r.ok() && server->complete()) __builtin_trap();  // nothing here is signed by k
  const std::string compact(input.begin(), input.end());
  (void)ParseJwt(compact);
}

}  // namespace
}  // namespace strata::security

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::security;
  if (size < 1) return 0;
  const strata::ByteView input(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      FuzzPlain(input);
      break;
    case 1:
      FuzzScramServer(input);
      break;
    case 2:
      FuzzScramClient(input);
      break;
    default:
      FuzzOAuthBearer(input);
      break;
  }
  return 0;
}
