#include "client_config.h"

#include <cctype>
#include <cstdio>
#include <fstream>

namespace strata::bench {

namespace {

std::string TrimmedProperty(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Splits `key=value` (whitespace around either trimmed); false without a key or `=`.
bool SplitProperty(const std::string& entry, std::string* key, std::string* value) {
  size_t eq = entry.find('=');
  if (eq == std::string::npos) return false;
  *key = TrimmedProperty(entry.substr(0, eq));
  *value = TrimmedProperty(entry.substr(eq + 1));
  return !key->empty();
}

bool IsSecretProperty(std::string key) {
  for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key.find("password") != std::string::npos;
}

}  // namespace

bool SetClientProperty(rd_kafka_conf_t* conf, const std::string& key, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    std::fprintf(stderr, "config %s=%s: %s\n", key.c_str(),
                 IsSecretProperty(key) ? "***" : value.c_str(), err);
    return false;
  }
  return true;
}

bool ApplyClientConfig(rd_kafka_conf_t* conf, const std::string& command_config,
                       const std::vector<std::string>& sets) {
  std::string key, value;
  if (!command_config.empty()) {
    std::ifstream in(command_config);
    if (!in) {
      std::fprintf(stderr, "config file %s: cannot read it\n", command_config.c_str());
      return false;
    }
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::string entry = TrimmedProperty(line);
      if (entry.empty() || entry[0] == '#' || entry[0] == '!') continue;
      if (!SplitProperty(entry, &key, &value)) {
        std::fprintf(stderr, "config file %s:%d: expected key=value\n", command_config.c_str(), n);
        return false;
      }
      if (!SetClientProperty(conf, key, value)) return false;
    }
  }
  for (const auto& entry : sets) {
    if (!SplitProperty(entry, &key, &value)) {
      std::fprintf(stderr, "--set %s: expected key=value\n",
                   IsSecretProperty(entry) ? "<masked>" : entry.c_str());
      return false;
    }
    if (!SetClientProperty(conf, key, value)) return false;
  }
  return true;
}

}  // namespace strata::bench
