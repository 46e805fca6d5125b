#include "config/config_def.h"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace strata::config {

namespace {

std::optional<int64_t> ParseLong(const std::string& v) {
  int64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size() || v.empty()) return std::nullopt;
  return out;
}

}  // namespace

std::vector<std::string> SplitList(const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::function<std::optional<std::string>(const std::string&)> AtLeast(int64_t min) {
  return [min](const std::string& v) -> std::optional<std::string> {
    auto n = ParseLong(v);
    if (n && *n < min) return "must be at least " + std::to_string(min);
    return std::nullopt;
  };
}

std::function<std::optional<std::string>(const std::string&)> OneOf(
    std::vector<std::string> allowed) {
  return [allowed](const std::string& v) -> std::optional<std::string> {
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return std::nullopt;
    std::string all;
    for (const auto& a : allowed) all += (all.empty() ? "" : ", ") + a;
    return "must be one of [" + all + "]";
  };
}

std::function<std::optional<std::string>(const std::string&)> ListOf(
    std::vector<std::string> allowed) {
  auto one = OneOf(allowed);
  return [one](const std::string& v) -> std::optional<std::string> {
    for (const auto& item : SplitList(v)) {
      if (auto err = one(item)) return err;
    }
    return std::nullopt;
  };
}

std::optional<std::string> ValidateValue(const ConfigDef& def, const std::string& value) {
  switch (def.type) {
    case ConfigType::kInt:
    case ConfigType::kShort:
    case ConfigType::kLong: {
      auto n = ParseLong(value);
      if (!n) return "'" + value + "' is not an integer";
      if (def.type == ConfigType::kInt && (*n > INT32_MAX || *n < INT32_MIN)) {
        return "'" + value + "' is out of range for an int";
      }
      if (def.type == ConfigType::kShort && (*n > INT16_MAX || *n < INT16_MIN)) {
        return "'" + value + "' is out of range for a short";
      }
      break;
    }
    case ConfigType::kBoolean:
      if (value != "true" && value != "false") return "'" + value + "' is not true or false";
      break;
    case ConfigType::kDouble: {
      std::istringstream in(value);
      double d;
      if (!(in >> d) || !in.eof()) return "'" + value + "' is not a number";
      break;
    }
    default:
      break;
  }
  if (def.rule) return def.rule(value);
  return std::nullopt;
}

int64_t ToLong(const std::string& value) { return ParseLong(value).value_or(0); }
bool ToBool(const std::string& value) { return value == "true"; }

const ConfigDef* FindTopicConfig(const std::string& name) {
  for (const auto& d : TopicConfigDefs()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

const ConfigDef* FindTopicConfigByBrokerSynonym(const std::string& name) {
  if (name.empty()) return nullptr;
  for (const auto& d : TopicConfigDefs()) {
    if (d.broker_synonym == name) return &d;
  }
  return nullptr;
}

const ConfigDef* FindBrokerConfig(const std::string& name) {
  for (const auto& d : BrokerConfigDefs()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace strata::config
