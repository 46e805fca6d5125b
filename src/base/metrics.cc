#include "base/metrics.h"

#include <fmt/format.h>

namespace strata::metrics {

namespace {
std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}
}  // namespace

std::string RenderLabels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ",";
    out += labels[i].first + "=\"" + Escape(labels[i].second) + "\"";
  }
  return out + "}";
}

Counter& Registry::GetCounter(const std::string& name, const std::string& help,
                              const Labels& labels) {
  std::lock_guard lock(mu_);
  Family& f = families_[name];
  f.help = help;
  f.type = "counter";
  auto& slot = f.counters[RenderLabels(labels)];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

void Registry::SetGauge(const std::string& name, const std::string& help, const Labels& labels,
                        std::function<double()> value) {
  std::lock_guard lock(mu_);
  Family& f = families_[name];
  f.help = help;
  f.type = "gauge";
  f.gauges[RenderLabels(labels)] = std::move(value);
}

void Registry::SetGaugeFamily(const std::string& name, const std::string& help,
                              std::function<std::vector<std::pair<Labels, double>>()> values) {
  std::lock_guard lock(mu_);
  Family& f = families_[name];
  f.help = help;
  f.type = "gauge";
  f.family = std::move(values);
}

std::string Registry::RenderPrometheus() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, f.help, name, f.type);
    for (const auto& [labels, c] : f.counters)
      out += fmt::format("{}{} {}\n", name, labels, c->value());
    for (const auto& [labels, g] : f.gauges) out += fmt::format("{}{} {}\n", name, labels, g());
    if (f.family) {
      for (const auto& [labels, v] : f.family()) {
        out += fmt::format("{}{} {}\n", name, RenderLabels(labels), v);
      }
    }
  }
  return out;
}

Registry& Global() {
  static Registry registry;
  return registry;
}

}  // namespace strata::metrics
