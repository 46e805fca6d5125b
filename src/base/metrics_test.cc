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

TEST(MetricsTest, CountsKeptElsewhereRenderAsCounters) {
  Registry r;
  int64_t uploads = 4;
  r.SetCounterFunc("strata_remote_uploads_total", "Uploads", {}, [&] { return double(uploads); });
  r.SetCounterFamily("strata_topic_x_total", "Per topic", [] {
    return std::vector<std::pair<Labels, double>>{{{{"topic", "t"}}, 9}};
  });
  uploads = 6;
  std::string text = r.RenderPrometheus();
  EXPECT_NE(
      text.find("# TYPE strata_remote_uploads_total counter\nstrata_remote_uploads_total 6\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE strata_topic_x_total counter\nstrata_topic_x_total{topic=\"t\"} 9\n"),
            std::string::npos)
      << text;
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithSumAndCount) {
  Registry r;
  Histogram& h =
      r.GetHistogram("strata_request_seconds", "Time", {{"api", "Produce"}}, {0.001, 0.01});
  EXPECT_EQ(&h, &r.GetHistogram("strata_request_seconds", "Time", {{"api", "Produce"}}, {1}));
  h.Observe(0.0005);
  h.Observe(0.001);  // upper bounds are inclusive
  h.Observe(0.005);
  h.Observe(3);
  EXPECT_EQ(h.bucket(0), 2);
  EXPECT_EQ(h.bucket(1), 1);
  EXPECT_EQ(h.bucket(2), 1);
  EXPECT_NEAR(h.sum(), 3.0065, 1e-9);
  std::string text = r.RenderPrometheus();
  EXPECT_NE(text.find("# TYPE strata_request_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("strata_request_seconds_bucket{api=\"Produce\",le=\"0.001\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("strata_request_seconds_bucket{api=\"Produce\",le=\"0.01\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("strata_request_seconds_bucket{api=\"Produce\",le=\"+Inf\"} 4\n"),
            std::string::npos);
  EXPECT_NE(text.find("strata_request_seconds_sum{api=\"Produce\"} 3.0065\n"), std::string::npos);
  EXPECT_NE(text.find("strata_request_seconds_count{api=\"Produce\"} 4\n"), std::string::npos);
}

}  // namespace
}  // namespace strata::metrics
