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

// A Prometheus histogram with fixed upper bounds (seconds for durations).
// Observe is lock-free: one atomic add per bucket hit, plus count and sum.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  const std::vector<double>& bounds() const { return bounds_; }
  // Non-cumulative count of bucket i (bounds().size() is the +Inf bucket).
  int64_t bucket(size_t i) const { return buckets_[i].load(std::memory_order_relaxed); }
  int64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<int64_t>[]> buckets_;  // bounds_.size() + 1
  std::atomic<int64_t> count_{0};
  std::atomic<int64_t> sum_nanos_{0};  // sum * 1e9, so it can be an integer atomic
};

// Bucket bounds for request durations, 50 us to 30 s.
const std::vector<double>& LatencyBuckets();

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
  // The same for a count another subsystem keeps (it only grows, and its
  // name ends in _total): rendered as a Prometheus counter.
  void SetCounterFunc(const std::string& name, const std::string& help, const Labels& labels,
                      std::function<double()> value);
  void SetCounterFamily(const std::string& name, const std::string& help,
                        std::function<std::vector<std::pair<Labels, double>>()> values);

  // Returns the histogram for (name, labels), creating it with `bounds` on
  // first use. The reference stays valid for the registry's lifetime.
  Histogram& GetHistogram(const std::string& name, const std::string& help, const Labels& labels,
                          const std::vector<double>& bounds);

  std::string RenderPrometheus() const;

 private:
  void SetFunc(const std::string& name, const std::string& help, const char* type,
               const Labels& labels, std::function<double()> value);
  void SetFamily(const std::string& name, const std::string& help, const char* type,
                 std::function<std::vector<std::pair<Labels, double>>()> values);

  struct Family {
    std::string help;
    std::string type;                                          // "counter", "gauge" or "histogram"
    std::map<std::string, std::unique_ptr<Counter>> counters;  // by rendered labels
    std::map<std::string, std::pair<Labels, std::unique_ptr<Histogram>>> histograms;
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
