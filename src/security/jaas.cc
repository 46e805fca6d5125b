// ParseJaasConfig: a tokenizer that mirrors the syntax Kafka configures its
// StreamTokenizer with, and the entry grammar on top of it.
#include "security/jaas.h"

#include <cctype>
#include <string>
#include <vector>

namespace strata::security {
namespace {

enum class JaasTokenKind { kWord, kQuoted, kSemicolon, kEquals, kEnd };

struct JaasToken {
  JaasTokenKind kind = JaasTokenKind::kEnd;
  std::string text;  // the word or the unescaped quoted string
  bool is_string() const { return kind == JaasTokenKind::kWord || kind == JaasTokenKind::kQuoted; }
};

Error JaasError(std::string message) {
  return MakeError(Errc::kInvalidArgument, std::move(message));
}

class JaasTokenizer {
 public:
  explicit JaasTokenizer(std::string_view in) : in_(in) {}

  Result<JaasToken> Next() {
    SkipSpaceAndComments();
    if (pos_ >= in_.size()) return JaasToken{JaasTokenKind::kEnd, {}};
    char c = in_[pos_];
    if (c == ';' || c == '=') {
      ++pos_;
      return JaasToken{c == ';' ? JaasTokenKind::kSemicolon : JaasTokenKind::kEquals, {}};
    }
    if (c == '"' || c == '\'') return Quoted();
    size_t start = pos_;
    while (pos_ < in_.size() && IsWordByte(in_[pos_])) ++pos_;
    return JaasToken{JaasTokenKind::kWord, std::string(in_.substr(start, pos_ - start))};
  }

 private:
  // StreamTokenizer treats bytes 0-32 as white space.
  static bool IsSpace(char c) { return static_cast<unsigned char>(c) <= ' '; }
  static bool IsWordByte(char c) {
    return !IsSpace(c) && c != ';' && c != '=' && c != '"' && c != '\'' && c != '/';
  }

  // Kafka makes '/' a comment character and enables // and /* */ comments:
  // a lone '/' also comments out the rest of its line.
  void SkipSpaceAndComments() {
    while (pos_ < in_.size()) {
      if (IsSpace(in_[pos_])) {
        ++pos_;
      } else if (in_.substr(pos_, 2) == "/*") {
        size_t end = in_.find("*/", pos_ + 2);
        pos_ = end == std::string_view::npos ? in_.size() : end + 2;
      } else if (in_[pos_] == '/') {
        size_t end = in_.find_first_of("\r\n", pos_);
        pos_ = end == std::string_view::npos ? in_.size() : end;
      } else {
        return;
      }
    }
  }

  Result<JaasToken> Quoted();
  char Escape();

  std::string_view in_;
  size_t pos_ = 0;
};

// The byte after a backslash in a quoted string (pos_ at that byte); advances
// past the escape. The escapes are those of Java's StreamTokenizer.
char JaasTokenizer::Escape() {
  char c = in_[pos_++];
  switch (c) {
    case 'a':
      return '\a';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'v':
      return '\v';
    default:
      break;
  }
  if (c < '0' || c > '7') return c;
  // Octal: up to three digits, the third only when the first is 0-3.
  int value = c - '0';
  int max_digits = c <= '3' ? 3 : 2;
  for (int i = 1; i < max_digits && pos_ < in_.size() && in_[pos_] >= '0' && in_[pos_] <= '7';
       ++i) {
    value = value * 8 + (in_[pos_++] - '0');
  }
  return static_cast<char>(value);
}

Result<JaasToken> JaasTokenizer::Quoted() {
  size_t start = pos_;
  char quote = in_[pos_++];
  std::string text;
  while (pos_ < in_.size()) {
    char c = in_[pos_];
    // StreamTokenizer ends a quoted string at the end of its line; that is
    // almost always a missing quote, so it is reported rather than accepted.
    if (c == '\n' || c == '\r') break;
    ++pos_;
    if (c == quote) return JaasToken{JaasTokenKind::kQuoted, std::move(text)};
    if (c == '\\' && pos_ < in_.size()) {
      text.push_back(Escape());
    } else {
      text.push_back(c);
    }
  }
  return JaasError("Unterminated quoted string at offset " + std::to_string(start) +
                   " in JAAS config");
}

std::string Describe(const JaasToken& token) {
  switch (token.kind) {
    case JaasTokenKind::kSemicolon:
      return "';'";
    case JaasTokenKind::kEquals:
      return "'='";
    case JaasTokenKind::kEnd:
      return "the end";
    default:
      return "'" + token.text + "'";
  }
}

Result<std::string> ControlFlag(const JaasToken& token) {
  if (!token.is_string()) {
    return JaasError("Login module control flag not specified in JAAS config, found " +
                     Describe(token));
  }
  std::string flag = token.text;
  for (char& c : flag) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (flag != "required" && flag != "requisite" && flag != "sufficient" && flag != "optional") {
    return JaasError("Invalid login module control flag '" + token.text + "' in JAAS config");
  }
  return flag;
}

// One entry; `first` is its first token, already read.
Result<JaasConfig> ParseEntry(JaasTokenizer& tokens, const JaasToken& first) {
  JaasConfig entry;
  if (!first.is_string()) {
    return JaasError("Login module class expected in JAAS config, found " + Describe(first));
  }
  entry.login_module = first.text;
  STRATA_ASSIGN_OR_RETURN(JaasToken flag_token, tokens.Next());
  STRATA_ASSIGN_OR_RETURN(entry.control_flag, ControlFlag(flag_token));
  while (true) {
    STRATA_ASSIGN_OR_RETURN(JaasToken key, tokens.Next());
    if (key.kind == JaasTokenKind::kSemicolon) return entry;
    if (key.kind == JaasTokenKind::kEnd) {
      return JaasError("JAAS config entry not terminated by semi-colon");
    }
    if (!key.is_string()) {
      return JaasError("Option name expected in JAAS config, found " + Describe(key));
    }
    STRATA_ASSIGN_OR_RETURN(JaasToken equals, tokens.Next());
    STRATA_ASSIGN_OR_RETURN(JaasToken value, tokens.Next());
    if (equals.kind != JaasTokenKind::kEquals || !value.is_string()) {
      return JaasError("Value not specified for key '" + key.text + "' in JAAS config");
    }
    // A repeated key replaces the earlier value, as in Kafka's option map.
    entry.options[key.text] = std::move(value.text);
  }
}

}  // namespace

Result<JaasConfig> ParseJaasConfig(std::string_view text) {
  JaasTokenizer tokens(text);
  std::vector<JaasConfig> entries;
  while (true) {
    STRATA_ASSIGN_OR_RETURN(JaasToken first, tokens.Next());
    if (first.kind == JaasTokenKind::kEnd) break;
    STRATA_ASSIGN_OR_RETURN(JaasConfig entry, ParseEntry(tokens, first));
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) return JaasError("Login module not specified in JAAS config");
  // Kafka's JaasContext refuses a sasl.jaas.config with more than one module.
  if (entries.size() > 1) {
    return JaasError("JAAS config property contains " + std::to_string(entries.size()) +
                     " login modules, should be 1 module");
  }
  return std::move(entries.front());
}

std::map<std::string, std::string> PlainUsers(const JaasConfig& config) {
  constexpr std::string_view kPrefix = "user_";
  std::map<std::string, std::string> users;
  for (const auto& [key, value] : config.options) {
    if (key.size() > kPrefix.size() && key.starts_with(kPrefix)) {
      users.emplace(key.substr(kPrefix.size()), value);
    }
  }
  return users;
}

}  // namespace strata::security
