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

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      buckets_(std::make_unique<std::atomic<int64_t>[]>(bounds_.size() + 1)) {}

void Histogram::Observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(static_cast<int64_t>(value * 1e9), std::memory_order_relaxed);
}

double Histogram::sum() const {
  return static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) / 1e9;
}

const std::vector<double>& LatencyBuckets() {
  static const std::vector<double> bounds{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                          0.005,   0.01,   0.025,   0.05,   0.1,   0.25,
                                          0.5,     1,      2.5,     5,      10,    30};
  return bounds;
}

Histogram& Registry::GetHistogram(const std::string& name, const std::string& help,
                                  const Labels& labels, const std::vector<double>& bounds) {
  std::lock_guard lock(mu_);
  Family& f = families_[name];
  f.help = help;
  f.type = "histogram";
  auto& slot = f.histograms[RenderLabels(labels)];
  if (!slot.second) slot = {labels, std::make_unique<Histogram>(bounds)};
  return *slot.second;
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

void Registry::SetFunc(const std::string& name, const std::string& help, const char* type,
                       const Labels& labels, std::function<double()> value) {
  std::lock_guard lock(mu_);
  Family& f = families_[name];
  f.help = help;
  f.type = type;
  f.gauges[RenderLabels(labels)] = std::move(value);
}

void Registry::SetFamily(const std::string& name, const std::string& help, const char* type,
                         std::function<std::vector<std::pair<Labels, double>>()> values) {
  std::lock_guard lock(mu_);
  Family& f = families_[name];
  f.help = help;
  f.type = type;
  f.family = std::move(values);
}

void Registry::SetGauge(const std::string& name, const std::string& help, const Labels& labels,
                        std::function<double()> value) {
  SetFunc(name, help, "gauge", labels, std::move(value));
}

void Registry::SetGaugeFamily(const std::string& name, const std::string& help,
                              std::function<std::vector<std::pair<Labels, double>>()> values) {
  SetFamily(name, help, "gauge", std::move(values));
}

void Registry::SetCounterFunc(const std::string& name, const std::string& help,
                              const Labels& labels, std::function<double()> value) {
  SetFunc(name, help, "counter", labels, std::move(value));
}

void Registry::SetCounterFamily(const std::string& name, const std::string& help,
                                std::function<std::vector<std::pair<Labels, double>>()> values) {
  SetFamily(name, help, "counter", std::move(values));
}

namespace {
// _bucket (cumulative, with le), _sum and _count lines of one histogram.
void RenderHistogram(const std::string& name, const Labels& labels, const Histogram& h,
                     std::string& out) {
  int64_t cumulative = 0;
  for (size_t i = 0; i <= h.bounds().size(); ++i) {
    cumulative += h.bucket(i);
    Labels with_le = labels;
    with_le.emplace_back("le", i < h.bounds().size() ? fmt::format("{}", h.bounds()[i]) : "+Inf");
    out += fmt::format("{}_bucket{} {}\n", name, RenderLabels(with_le), cumulative);
  }
  out += fmt::format("{}_sum{} {}\n", name, RenderLabels(labels), h.sum());
  out += fmt::format("{}_count{} {}\n", name, RenderLabels(labels), cumulative);
}
}  // namespace

std::string Registry::RenderPrometheus() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, f.help, name, f.type);
    for (const auto& [labels, c] : f.counters)
      out += fmt::format("{}{} {}\n", name, labels, c->value());
    for (const auto& [labels, g] : f.gauges) out += fmt::format("{}{} {}\n", name, labels, g());
    for (const auto& [rendered, h] : f.histograms) RenderHistogram(name, h.first, *h.second, out);
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
