#pragma once
// The principal of an SSL connection, as Kafka's DefaultKafkaPrincipalBuilder
// builds it: the client certificate's subject, written as Java's
// X500Principal.getName() writes it, then rewritten by the listener's
// ssl.principal.mapping.rules (Kafka's SslPrincipalMapper, KIP-371):
//   rules := rule ("," rule)*          white space and newlines around rules
//   rule  := DEFAULT | RULE:<pattern>/<replacement>/[L|U]
// <pattern> is a regular expression that must match the whole name; inside
// it and <replacement> a backslash escapes the next character (so "\/" is a
// slash, and commas need no escape). The replacement takes $1-style group
// references as Java's replaceAll does; L and U lower- or upper-case the
// result. The first rule that matches wins; DEFAULT keeps the name as is.
// A mapper is immutable once parsed and may be shared across threads.
#include <openssl/ossl_typ.h>

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "security/principal.h"

namespace strata::security {

class SslPrincipalMapper {
 public:
  // The "DEFAULT" rules, Kafka's default for ssl.principal.mapping.rules.
  SslPrincipalMapper();

  // kInvalidArgument "Invalid rule: ..." for a rule outside the grammar or a
  // pattern std::regex (ECMAScript) cannot compile. An empty string gives no
  // rules at all (every Map then fails), as in Kafka.
  static Result<SslPrincipalMapper> Parse(std::string_view rules);

  // The principal name for a subject; kInvalidArgument "No rules apply to
  // <dn>, rules [...]" when no rule matches.
  Result<std::string> Map(std::string_view distinguished_name) const;

  // "[RULE:.../.../L, DEFAULT]", as in Kafka's messages.
  std::string RulesString() const;

 private:
  struct Rule {
    bool is_default = true;
    std::regex pattern;
    std::string pattern_text;
    std::string replacement;  // with its backslash escapes, as written
    char case_flag = 0;       // 0, 'L' or 'U'
    std::string ToString() const;
  };
  static Result<Rule> MakeRule(std::string_view pattern, std::string_view replacement, char flag);

  std::vector<Rule> rules_;
};

// The certificate's subject in RFC 2253 form, most specific first, as Java's
// X500Principal.getName() (RFC2253) gives it: "CN=alice,OU=eng,O=Acme,C=US".
// Only CN, C, L, ST, O, OU, STREET, DC and UID are named; other attributes are
// written as <dotted OID>=#<hex of the DER value>; specials are
// backslash-escaped.
std::string DistinguishedName(X509* cert);

// User:<mapped subject>, or User:ANONYMOUS when the client sent no
// certificate (`cert_or_null` is null). Fails when no rule maps the subject:
// Kafka then fails the connection's authentication.
Result<KafkaPrincipal> PrincipalFromCertificate(X509* cert_or_null,
                                                const SslPrincipalMapper& mapper);

}  // namespace strata::security
