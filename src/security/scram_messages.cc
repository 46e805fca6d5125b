// RFC 5802 section 7's message grammar, for the SCRAM server and client.
// Every attribute value of these messages is free of ',' (names escape it,
// nonces and base64 exclude it), so a message is split at every comma and
// each field checked in turn.
#include <cctype>
#include <charconv>
#include <span>

#include "security/scram_internal.h"

namespace strata::security::scram {
namespace {

Error Malformed(std::string message) {
  return MakeError(Errc::kInvalidArgument, "Invalid SCRAM message: " + std::move(message));
}

std::vector<std::string_view> SplitFields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  for (size_t comma; (comma = text.find(',', start)) != std::string_view::npos; start = comma + 1) {
    fields.push_back(text.substr(start, comma - start));
  }
  fields.push_back(text.substr(start));
  return fields;
}

// The value of `field` when it is "<name>=<value>", else nullopt.
std::optional<std::string_view> Attribute(std::string_view field, char name) {
  if (field.size() < 2 || field[0] != name || field[1] != '=') return std::nullopt;
  return field.substr(2);
}

// printable = %x21-2B / %x2D-7E (any visible ASCII but ',').
bool IsNonce(std::string_view nonce) {
  if (nonce.empty()) return false;
  for (char c : nonce) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

// Extensions after the mandatory attributes: <letters>=<value>. Unknown ones
// are kept for the caller to judge (RFC 5802: ignore the unknown).
Status ParseExtensions(std::span<const std::string_view> fields,
                       std::map<std::string, std::string>* out) {
  for (std::string_view field : fields) {
    size_t eq = field.find('=');
    if (eq == 0 || eq == std::string_view::npos || eq + 1 == field.size()) {
      return Malformed("bad extension '" + std::string(field) + "'");
    }
    for (size_t i = 0; i < eq; ++i) {
      if (!std::isalpha(static_cast<unsigned char>(field[i]))) {
        return Malformed("bad extension name '" + std::string(field.substr(0, eq)) + "'");
      }
    }
    if (field[0] == 'm' && eq == 1) return Malformed("mandatory extension m= is not supported");
    if (out != nullptr)
      (*out)[std::string(field.substr(0, eq))] = std::string(field.substr(eq + 1));
  }
  return Status::Ok();
}

Result<Bytes> Base64Attribute(std::string_view field, char name, const char* what) {
  std::optional<std::string_view> value = Attribute(field, name);
  if (!value) return Malformed(std::string("expected ") + name + "=<" + what + ">");
  std::optional<Bytes> bytes = Base64Decode(*value);
  if (!bytes) return Malformed(std::string(what) + " is not valid base64");
  return std::move(*bytes);
}

}  // namespace

std::string EncodeSaslName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == ',') {
      out += "=2C";
    } else if (c == '=') {
      out += "=3D";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::optional<std::string> DecodeSaslName(std::string_view saslname) {
  if (saslname.empty()) return std::nullopt;
  std::string out;
  out.reserve(saslname.size());
  for (size_t i = 0; i < saslname.size(); ++i) {
    char c = saslname[i];
    if (c == '\0') return std::nullopt;
    if (c != '=') {
      out.push_back(c);
      continue;
    }
    std::string_view escape = saslname.substr(i + 1, 2);
    if (escape != "2C" && escape != "3D") return std::nullopt;  // a bare '=' is invalid
    out.push_back(escape == "2C" ? ',' : '=');
    i += 2;
  }
  return out;
}

// gs2-header client-first-message-bare:
//   (n|y|p=<cb-name>) "," [a=<saslname>] "," [m=...,] n=<saslname> ",r=" <nonce> ["," ext]*
Result<ClientFirst> ParseClientFirst(std::string_view text) {
  std::vector<std::string_view> f = SplitFields(text);
  if (f.size() < 4) return Malformed("client-first message has too few attributes");
  if (f[0].starts_with("p=")) return Malformed("channel binding is not supported");
  // "y": the client could bind the channel but thinks we cannot, which is true.
  if (f[0] != "n" && f[0] != "y") return Malformed("bad gs2 channel binding flag");
  ClientFirst msg;
  if (!f[1].empty()) {
    std::optional<std::string_view> authzid = Attribute(f[1], 'a');
    std::optional<std::string> decoded = authzid ? DecodeSaslName(*authzid) : std::nullopt;
    if (!decoded) return Malformed("bad authorization id");
    msg.authzid = std::move(*decoded);
  }
  if (Attribute(f[2], 'm')) return Malformed("mandatory extension m= is not supported");
  std::optional<std::string_view> saslname = Attribute(f[2], 'n');
  std::optional<std::string> user = saslname ? DecodeSaslName(*saslname) : std::nullopt;
  if (!user) return Malformed("bad user name");
  std::optional<std::string_view> nonce = Attribute(f[3], 'r');
  if (!nonce || !IsNonce(*nonce)) return Malformed("bad client nonce");
  STRATA_RETURN_IF_ERROR(ParseExtensions(std::span(f).subspan(4), &msg.extensions));
  msg.gs2_header = std::string(f[0]) + "," + std::string(f[1]) + ",";
  msg.user = std::move(*user);
  msg.nonce = std::string(*nonce);
  msg.bare = std::string(text.substr(msg.gs2_header.size()));
  return msg;
}

// [m=...,] r=<nonce> ",s=" <base64 salt> ",i=" <iterations> ["," ext]*
Result<ServerFirst> ParseServerFirst(std::string_view text) {
  std::vector<std::string_view> f = SplitFields(text);
  if (Attribute(f[0], 'm')) return Malformed("mandatory extension m= is not supported");
  if (f.size() < 3) return Malformed("server-first message has too few attributes");
  ServerFirst msg;
  std::optional<std::string_view> nonce = Attribute(f[0], 'r');
  if (!nonce || !IsNonce(*nonce)) return Malformed("bad nonce");
  msg.nonce = std::string(*nonce);
  STRATA_ASSIGN_OR_RETURN(msg.salt, Base64Attribute(f[1], 's', "salt"));
  std::optional<std::string_view> iterations = Attribute(f[2], 'i');
  if (!iterations || iterations->empty() || iterations->size() > 9) {
    return Malformed("bad iteration count");
  }
  auto [end, ec] =
      std::from_chars(iterations->data(), iterations->data() + iterations->size(), msg.iterations);
  if (ec != std::errc() || end != iterations->data() + iterations->size() || msg.iterations <= 0) {
    return Malformed("bad iteration count");
  }
  STRATA_RETURN_IF_ERROR(ParseExtensions(std::span(f).subspan(3), nullptr));
  return msg;
}

// c=<base64 gs2 header> ",r=" <nonce> ["," ext]* ",p=" <base64 proof>
Result<ClientFinal> ParseClientFinal(std::string_view text) {
  std::vector<std::string_view> f = SplitFields(text);
  if (f.size() < 3) return Malformed("client-final message has too few attributes");
  ClientFinal msg;
  STRATA_ASSIGN_OR_RETURN(msg.channel_binding, Base64Attribute(f[0], 'c', "channel binding"));
  std::optional<std::string_view> nonce = Attribute(f[1], 'r');
  if (!nonce || !IsNonce(*nonce)) return Malformed("bad nonce");
  msg.nonce = std::string(*nonce);
  STRATA_RETURN_IF_ERROR(ParseExtensions(std::span(f).subspan(2, f.size() - 3), nullptr));
  STRATA_ASSIGN_OR_RETURN(msg.proof, Base64Attribute(f.back(), 'p', "proof"));
  msg.without_proof = std::string(text.substr(0, text.size() - f.back().size() - 1));
  return msg;
}

// (e=<error> | v=<base64 signature>) ["," ext]*
Result<ServerFinal> ParseServerFinal(std::string_view text) {
  std::vector<std::string_view> f = SplitFields(text);
  ServerFinal msg;
  if (std::optional<std::string_view> error = Attribute(f[0], 'e')) {
    msg.error = std::string(*error);
  } else {
    STRATA_ASSIGN_OR_RETURN(msg.signature, Base64Attribute(f[0], 'v', "server signature"));
  }
  STRATA_RETURN_IF_ERROR(ParseExtensions(std::span(f).subspan(1), nullptr));
  return msg;
}

}  // namespace strata::security::scram
