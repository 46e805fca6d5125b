#include "config/properties.h"

#include <fstream>
#include <sstream>

namespace strata::config {

namespace {
std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}
}  // namespace

Properties ParseProperties(const std::string& text) {
  Properties props;
  std::istringstream in(text);
  std::string line, pending;
  while (std::getline(in, line)) {
    std::string t = Trim(line);
    if (pending.empty() && (t.empty() || t[0] == '#' || t[0] == '!')) continue;
    if (!t.empty() && t.back() == '\\') {
      pending += t.substr(0, t.size() - 1);
      continue;
    }
    t = pending + t;
    pending.clear();
    size_t sep = t.find_first_of("=:");
    if (sep == std::string::npos) {
      props[t] = "";
      continue;
    }
    props[Trim(t.substr(0, sep))] = Trim(t.substr(sep + 1));
  }
  return props;
}

Properties LoadPropertiesFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw ConfigError("cannot read config file " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ParseProperties(ss.str());
}

std::pair<std::string, std::string> ParseAssignment(const std::string& assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError("--set expects key=value, got '" + assignment + "'");
  }
  return {Trim(assignment.substr(0, eq)), Trim(assignment.substr(eq + 1))};
}

}  // namespace strata::config
