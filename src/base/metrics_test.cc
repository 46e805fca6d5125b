#include "base/metrics.h"

#include <gtest/gtest.h>

namespace strata::metrics {
namespace {

TEST(MetricsTest, RendersCountersAndGauges) {
  Registry r;
  r.GetCounter("strata_requests_total", "Requests", {{"api", "Produce"}}).Add(3);
  r.GetCounter("strata_requests_total", "Requests", {{"api", "Produce"}}).Add(2);
  r.GetCounter("strata_requests_total", "Requests", {{"api", "Fetch"}}).Add();
  r.SetGauge("strata_connections", "Open connections", {}, [] { return 7.0; });
  r.SetGaugeFamily("strata_log_end_offset", "Log end offset", [] {
    return std::vector<std::pair<Labels, double>>{{{{"topic", "a\"b"}, {"partition", "0"}}, 42}};
  });
  std::string text = r.RenderPrometheus();
  EXPECT_NE(text.find("# TYPE strata_requests_total counter"), std::string::npos);
  EXPECT_NE(text.find("strata_requests_total{api=\"Produce\"} 5\n"), std::string::npos);
  EXPECT_NE(text.find("strata_requests_total{api=\"Fetch\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("strata_connections 7\n"), std::string::npos);
  EXPECT_NE(text.find("strata_log_end_offset{topic=\"a\\\"b\",partition=\"0\"} 42\n"),
            std::string::npos);
}

}  // namespace
}  // namespace strata::metrics
