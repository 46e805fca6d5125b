#pragma once
// Java-properties style key=value files (server.properties), the format Kafka
// operators already keep their broker configuration in.
#include <map>
#include <stdexcept>
#include <string>

namespace strata::config {

// Thrown only at start-up and config parsing; names the offending key.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Properties = std::map<std::string, std::string>;

// Parses `key=value` / `key: value` lines; '#' and '!' start comments; a
// trailing backslash continues a line. Throws ConfigError on unreadable files.
Properties LoadPropertiesFile(const std::string& path);
Properties ParseProperties(const std::string& text);

// Parses "key=value" from --set; throws ConfigError when there is no '='.
std::pair<std::string, std::string> ParseAssignment(const std::string& assignment);

}  // namespace strata::config
