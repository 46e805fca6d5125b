// SslPrincipalMapper (rule grammar and Java's replaceAll semantics) and the
// subject formatting of Java's X500Principal.getName().
#include "security/ssl_principal.h"

#include <openssl/asn1.h>
#include <openssl/crypto.h>
#include <openssl/objects.h>
#include <openssl/x509.h>

#include <cctype>
#include <optional>
#include <utility>

#include "base/bytes.h"

namespace strata::security {
namespace {

// Java's \s, which Kafka's rule splitter skips around rules.
bool IsRuleSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\x0b' || c == '\f' || c == '\r';
}

size_t SkipRuleSpace(std::string_view text, size_t pos) {
  while (pos < text.size() && IsRuleSpace(text[pos])) ++pos;
  return pos;
}

// The position of the next '/' not escaped by a backslash, npos if none.
size_t FindRuleSlash(std::string_view text, size_t pos) {
  while (pos < text.size()) {
    if (text[pos] == '\\') {
      if (pos + 1 == text.size()) return std::string_view::npos;
      pos += 2;
    } else if (text[pos] == '/') {
      return pos;
    } else {
      ++pos;
    }
  }
  return std::string_view::npos;
}

Error InvalidRule(std::string_view text, size_t start, size_t pos) {
  size_t end = text.find(',', pos);
  std::string_view rule = text.substr(start, end == std::string_view::npos ? end : end - start);
  while (!rule.empty() && IsRuleSpace(rule.back())) rule.remove_suffix(1);
  return MakeError(Errc::kInvalidArgument, "Invalid rule: " + std::string(rule));
}

struct RuleSpec {
  bool is_default = false;
  std::string_view pattern;
  std::string_view replacement;
  char flag = 0;
};

// One rule starting at *pos (white space skipped); leaves *pos at the ',' that
// ends it or at the end of the text.
Result<RuleSpec> ScanRule(std::string_view text, size_t* pos) {
  size_t start = *pos;
  size_t p = start;
  RuleSpec spec;
  std::string_view rest = text.substr(p);
  if (rest.starts_with("DEFAULT")) {
    spec.is_default = true;
    p += 7;
  } else if (rest.starts_with("RULE:")) {
    size_t slash1 = FindRuleSlash(text, p + 5);
    size_t slash2 = slash1 == std::string_view::npos ? slash1 : FindRuleSlash(text, slash1 + 1);
    if (slash2 == std::string_view::npos) return InvalidRule(text, start, start);
    spec.pattern = text.substr(p + 5, slash1 - (p + 5));
    spec.replacement = text.substr(slash1 + 1, slash2 - slash1 - 1);
    p = slash2 + 1;
    if (p < text.size() && (text[p] == 'L' || text[p] == 'U')) spec.flag = text[p++];
  } else {
    return InvalidRule(text, start, start);
  }
  p = SkipRuleSpace(text, p);
  if (p < text.size() && text[p] != ',') return InvalidRule(text, start, p);
  *pos = p;
  return spec;
}

// Appends the replacement for one match as Java's Matcher.appendReplacement
// does, with Kafka's tweak that a reference to a group the pattern lacks is
// literal text: "\x" is x, "$n" the longest group number that exists.
void AppendReplacement(const std::smatch& match, std::string_view replacement, std::string* out) {
  size_t groups = match.size() - 1;
  for (size_t i = 0; i < replacement.size(); ++i) {
    char c = replacement[i];
    if (c == '\\' && i + 1 < replacement.size()) {
      out->push_back(replacement[++i]);
      continue;
    }
    bool digit_next =
        i + 1 < replacement.size() && std::isdigit(static_cast<unsigned char>(replacement[i + 1]));
    size_t ref = digit_next ? size_t(replacement[i + 1] - '0') : 0;
    if (c != '$' || !digit_next || ref > groups) {
      out->push_back(c);
      continue;
    }
    size_t j = i + 2;
    while (j < replacement.size() && std::isdigit(static_cast<unsigned char>(replacement[j])) &&
           ref * 10 + size_t(replacement[j] - '0') <= groups) {
      ref = ref * 10 + size_t(replacement[j++] - '0');
    }
    out->append(match[ref].str());  // empty when the group did not take part
    i = j - 1;
  }
}

// String.replaceAll: every match of `pattern` in `text` replaced.
std::string ReplaceAll(const std::string& text, const std::regex& pattern,
                       std::string_view replacement) {
  std::string out;
  auto tail = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) {
    out.append(tail, (*it)[0].first);
    AppendReplacement(*it, replacement, &out);
    tail = (*it)[0].second;
  }
  out.append(tail, text.cend());
  return out;
}

// The keywords Java's X500Principal writes in RFC 2253 form; every other
// attribute type is written as its dotted OID.
const char* Rfc2253Keyword(int nid) {
  switch (nid) {
    case NID_commonName:
      return "CN";
    case NID_countryName:
      return "C";
    case NID_localityName:
      return "L";
    case NID_stateOrProvinceName:
      return "ST";
    case NID_organizationName:
      return "O";
    case NID_organizationalUnitName:
      return "OU";
    case NID_streetAddress:
      return "STREET";
    case NID_domainComponent:
      return "DC";
    case NID_userId:
      return "UID";
    default:
      return nullptr;
  }
}

std::string DottedOid(const ASN1_OBJECT* obj) {
  int len = OBJ_obj2txt(nullptr, 0, obj, 1);
  if (len <= 0) return "?";
  std::string out(static_cast<size_t>(len) + 1, '\0');
  OBJ_obj2txt(out.data(), len + 1, obj, 1);
  out.resize(static_cast<size_t>(len));
  return out;
}

// "#" and the lower-case hex of the value's DER encoding (tag, length, bytes),
// Java's form for attributes without a keyword or with a non-string value.
void AppendDerHex(const ASN1_STRING* value, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  Bytes der{static_cast<uint8_t>(ASN1_STRING_type(value) & 0x1f)};
  size_t len = static_cast<size_t>(ASN1_STRING_length(value));
  if (len < 0x80) {
    der.push_back(static_cast<uint8_t>(len));
  } else {
    Bytes digits;
    for (size_t n = len; n > 0; n >>= 8) digits.insert(digits.begin(), uint8_t(n & 0xff));
    der.push_back(static_cast<uint8_t>(0x80 | digits.size()));
    der.insert(der.end(), digits.begin(), digits.end());
  }
  const uint8_t* data = ASN1_STRING_get0_data(value);
  der.insert(der.end(), data, data + len);
  out->push_back('#');
  for (uint8_t b : der) {
    out->push_back(kHex[b >> 4]);
    out->push_back(kHex[b & 0xf]);
  }
}

// The value as text when Java would print it as text (UTF8String,
// PrintableString, T61String, IA5String, GeneralString, BMPString), in UTF-8.
std::optional<std::string> StringValue(const ASN1_STRING* value) {
  const uint8_t* data = ASN1_STRING_get0_data(value);
  size_t len = static_cast<size_t>(ASN1_STRING_length(value));
  switch (ASN1_STRING_type(value)) {
    case V_ASN1_UTF8STRING:
      return std::string(reinterpret_cast<const char*>(data), len);
    case V_ASN1_PRINTABLESTRING:
    case V_ASN1_T61STRING:
    case V_ASN1_IA5STRING:
    case V_ASN1_GENERALSTRING: {  // Java reads these as ISO-8859-1
      std::string out;
      for (size_t i = 0; i < len; ++i) {
        if (data[i] < 0x80) {
          out.push_back(static_cast<char>(data[i]));
        } else {
          out.push_back(static_cast<char>(0xc0 | data[i] >> 6));
          out.push_back(static_cast<char>(0x80 | (data[i] & 0x3f)));
        }
      }
      return out;
    }
    case V_ASN1_BMPSTRING: {
      unsigned char* utf8 = nullptr;
      int n = ASN1_STRING_to_UTF8(&utf8, value);
      if (n < 0) return std::nullopt;
      std::string out(reinterpret_cast<const char*>(utf8), static_cast<size_t>(n));
      OPENSSL_free(utf8);
      return out;
    }
    default:
      return std::nullopt;
  }
}

// RFC 2253 escaping as Java applies it: a backslash before each of
// , = + < > # ; " \ and before leading and trailing spaces; NUL as \00.
void AppendEscaped(std::string_view value, std::string* out) {
  std::string escaped;
  for (char c : value) {
    if (c == '\0') {
      escaped += "\\00";
      continue;
    }
    if (std::string_view(",=+<>#;\"\\").find(c) != std::string_view::npos) escaped.push_back('\\');
    escaped.push_back(c);
  }
  auto is_edge = [](char c) { return c == ' ' || c == '\r'; };
  size_t lead = 0;
  while (lead < escaped.size() && is_edge(escaped[lead])) ++lead;
  size_t trail = escaped.size();
  while (trail > lead && is_edge(escaped[trail - 1])) --trail;
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (i < lead || i >= trail) out->push_back('\\');
    out->push_back(escaped[i]);
  }
}

void AppendAttribute(const X509_NAME_ENTRY* entry, std::string* out) {
  const ASN1_OBJECT* obj = X509_NAME_ENTRY_get_object(entry);
  const ASN1_STRING* value = X509_NAME_ENTRY_get_data(entry);
  const char* keyword = Rfc2253Keyword(OBJ_obj2nid(obj));
  out->append(keyword != nullptr ? std::string(keyword) : DottedOid(obj));
  out->push_back('=');
  std::optional<std::string> text = keyword != nullptr ? StringValue(value) : std::nullopt;
  if (text) {
    AppendEscaped(*text, out);
  } else {
    AppendDerHex(value, out);
  }
}

}  // namespace

SslPrincipalMapper::SslPrincipalMapper() : rules_(1) {}

std::string SslPrincipalMapper::Rule::ToString() const {
  if (is_default) return "DEFAULT";
  std::string out = "RULE:" + pattern_text + "/" + replacement;
  if (case_flag != 0) out.append("/").push_back(case_flag);
  return out;
}

Result<SslPrincipalMapper::Rule> SslPrincipalMapper::MakeRule(std::string_view pattern,
                                                              std::string_view replacement,
                                                              char flag) {
  Rule rule;
  rule.is_default = false;
  rule.pattern_text = std::string(pattern);
  rule.replacement = std::string(replacement);
  rule.case_flag = flag;
  // std::regex reports a bad pattern only by throwing; this runs at config
  // time, where the error becomes the config's error.
  try {
    rule.pattern = std::regex(rule.pattern_text, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return MakeError(Errc::kInvalidArgument,
                     "Invalid rule: " + rule.ToString() + ": bad pattern: " + e.what());
  }
  return rule;
}

Result<SslPrincipalMapper> SslPrincipalMapper::Parse(std::string_view rules) {
  SslPrincipalMapper mapper;
  mapper.rules_.clear();
  size_t pos = 0;
  while ((pos = SkipRuleSpace(rules, pos)) < rules.size()) {
    // An empty rule (",,", a trailing ',') is skipped, as Kafka does.
    if (rules[pos] != ',') {
      STRATA_ASSIGN_OR_RETURN(RuleSpec spec, ScanRule(rules, &pos));
      if (spec.is_default) {
        mapper.rules_.emplace_back();
      } else {
        STRATA_ASSIGN_OR_RETURN(Rule rule, MakeRule(spec.pattern, spec.replacement, spec.flag));
        mapper.rules_.push_back(std::move(rule));
      }
    }
    if (pos < rules.size()) ++pos;  // the ','
  }
  return mapper;
}

Result<std::string> SslPrincipalMapper::Map(std::string_view distinguished_name) const {
  std::string dn(distinguished_name);
  for (const Rule& rule : rules_) {
    if (rule.is_default) return dn;
    std::string name;
    // libstdc++'s matcher may throw on pathological patterns (error_complexity,
    // error_stack); that fails this connection only.
    try {
      // Kafka applies a rule only when its pattern matches the whole name.
      if (!std::regex_match(dn, rule.pattern)) continue;
      name = ReplaceAll(dn, rule.pattern, rule.replacement);
    } catch (const std::regex_error& e) {
      return MakeError(Errc::kInvalidArgument,
                       "Rule " + rule.ToString() + " failed on " + dn + ": " + e.what());
    }
    for (char& c : name) {
      auto u = static_cast<unsigned char>(c);
      if (rule.case_flag == 'L') c = static_cast<char>(std::tolower(u));
      if (rule.case_flag == 'U') c = static_cast<char>(std::toupper(u));
    }
    return name;
  }
  return MakeError(Errc::kInvalidArgument, "No rules apply to " + dn + ", rules " + RulesString());
}

std::string SslPrincipalMapper::RulesString() const {
  std::string out = "[";
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (i > 0) out += ", ";
    out += rules_[i].ToString();
  }
  return out + "]";
}

std::string DistinguishedName(X509* cert) {
  const X509_NAME* name = X509_get_subject_name(cert);
  std::string out;
  // RDNs most specific (last encoded) first; the attributes of a
  // multi-valued RDN in their encoded order, joined by '+'.
  for (int last = X509_NAME_entry_count(name) - 1; last >= 0;) {
    int set = X509_NAME_ENTRY_set(X509_NAME_get_entry(name, last));
    int first = last;
    while (first > 0 && X509_NAME_ENTRY_set(X509_NAME_get_entry(name, first - 1)) == set) --first;
    if (!out.empty()) out.push_back(',');
    for (int i = first; i <= last; ++i) {
      if (i > first) out.push_back('+');
      AppendAttribute(X509_NAME_get_entry(name, i), &out);
    }
    last = first - 1;
  }
  return out;
}

Result<KafkaPrincipal> PrincipalFromCertificate(X509* cert_or_null,
                                                const SslPrincipalMapper& mapper) {
  if (cert_or_null == nullptr) return KafkaPrincipal::Anonymous();
  STRATA_ASSIGN_OR_RETURN(std::string name, mapper.Map(DistinguishedName(cert_or_null)));
  return KafkaPrincipal{"User", std::move(name)};
}

}  // namespace strata::security
