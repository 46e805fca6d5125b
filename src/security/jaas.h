#pragma once
// Parser for Kafka's sasl.jaas.config value: the one JAAS login module entry a
// listener's SASL mechanism is configured with, e.g.
//   org.apache.kafka.common.security.plain.PlainLoginModule required
//       username="admin" password="admin-secret" user_alice="alice-secret";
// The grammar is Kafka's JaasConfig (a java.io.StreamTokenizer):
//   entry   := module-class control-flag (key '=' value)* ';'
//   value   := "quoted" | 'quoted' | word
// Whitespace, newlines and // or /* */ comments may appear between tokens; a
// word is a run of bytes other than whitespace and ; = " ' /. Quoted strings
// take backslash escapes (\n \t \" \\ ... and octal \ooo) and end on their
// line. Kafka's property holds exactly one entry, so several are an error.
// Parsed once at start-up or on a config change; not on a hot path.
#include <map>
#include <string>
#include <string_view>

#include "base/result.h"

namespace strata::security {

struct JaasConfig {
  std::string login_module;  // the class name, e.g. ...plain.PlainLoginModule
  std::string control_flag;  // required | requisite | sufficient | optional, lower case
  std::map<std::string, std::string> options;
};

// kInvalidArgument naming what was wrong (Kafka's wording where it has one).
Result<JaasConfig> ParseJaasConfig(std::string_view text);

// The PLAIN users of a PlainLoginModule entry: user -> password from its
// user_<name>="<password>" options (what Kafka's PlainServerCallbackHandler
// checks passwords against).
std::map<std::string, std::string> PlainUsers(const JaasConfig& config);

}  // namespace strata::security
