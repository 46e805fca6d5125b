#pragma once
// A small metrics registry rendered in Prometheus text format. Counters are
// lock-free atomics owned by the registry (callers keep references); gauges
// may be callbacks evaluated at scrape time, so subsystems expose state without
// mixing metric code into their logic.
//
// Thread-safety: registering takes a mutex; incrementing is lock-free;
// Render takes the mutex and calls gauge callbacks under it (they must not
// register metrics).
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace strata::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void Add(int64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

class Registry {
 public:
  // Returns the counter for (name, labels), creating it on first use. The
  // reference stays valid for the registry's lifetime.
  Counter& GetCounter(const std::string& name, const std::string& help, const Labels& labels = {});
  // A gauge evaluated at scrape time; re-registering the same (name, labels)
  // replaces the callback.
  void SetGauge(const std::string& name, const std::string& help, const Labels& labels,
                std::function<double()> value);
  // A family of gauges produced at scrape time (e.g. one per partition).
  void SetGaugeFamily(const std::string& name, const std::string& help,
                      std::function<std::vector<std::pair<Labels, double>>()> values);

  std::string RenderPrometheus() const;

 private:
  struct Family {
    std::string help;
    std::string type;                                                // "counter" or "gauge"
    std::map<std::string, std::unique_ptr<Counter>> counters;        // by rendered labels
    std::map<std::string, std::function<double()>> gauges;           // by rendered labels
    std::function<std::vector<std::pair<Labels, double>>()> family;  // optional
  };
  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

// The process-wide registry.
Registry& Global();

// Renders labels as {a="x",b="y"} with Prometheus escaping.
std::string RenderLabels(const Labels& labels);

}  // namespace strata::metrics
