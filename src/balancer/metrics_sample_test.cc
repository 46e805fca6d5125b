#include "balancer/metrics_sample.h"

#include <gtest/gtest.h>

namespace strata::balancer {
namespace {

MetricsSample Sample(size_t partitions) {
  MetricsSample s;
  s.broker = cluster::NodeId(7);
  s.timestamp_ms = 1'700'000'000'000;
  s.window_ms = 10'000;
  s.totals = {0.25, 1e6, 2e6, 1 << 30, 1LL << 40};
  for (size_t i = 0; i < partitions; ++i) {
    s.partitions.push_back({"t", static_cast<int32_t>(i), i % 2 == 0, 100.5, 50, 25, 12.5, 3,
                            static_cast<int64_t>(i) * 1000});
  }
  return s;
}

TEST(MetricsSampleTest, RoundTripsInPartsOfBoundedSize) {
  const MetricsSample s = Sample(kPartitionsPerRecord * 2 + 5);
  auto records = EncodeMetricsSample(s);
  ASSERT_EQ(records.size(), 3u);
  MetricsSample joined;
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_LT(records[i].size(), 1u << 20);
    auto part = DecodeMetricsSample(records[i]);
    ASSERT_TRUE(part.ok()) << part.error().message;
    EXPECT_EQ(part->part, static_cast<int32_t>(i));
    EXPECT_EQ(part->parts, 3);
    EXPECT_EQ(part->totals, s.totals);
    if (i == 0) joined = *part;
    if (i > 0) {
      joined.partitions.insert(joined.partitions.end(), part->partitions.begin(),
                               part->partitions.end());
    }
  }
  joined.part = 0;
  joined.parts = 1;
  EXPECT_EQ(joined, s);
  EXPECT_EQ(MetricsRecordKey(cluster::NodeId(7)), "7");
}

TEST(MetricsSampleTest, AnEmptySampleIsOneRecord) {
  auto records = EncodeMetricsSample(Sample(0));
  ASSERT_EQ(records.size(), 1u);
  auto back = DecodeMetricsSample(records[0]);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->partitions.empty());
}

TEST(MetricsSampleTest, DecodingIsStrictAndNamesTheField) {
  const std::string good = EncodeMetricsSample(Sample(1))[0];
  auto with = [&](const std::string& from, const std::string& to) {
    std::string v = good;
    const size_t at = v.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return v.replace(at, from.size(), to);
  };
  struct Case {
    std::string value;
    std::string mentions;
  };
  const Case cases[] = {
      {with("\"version\":1", "\"version\":2"), "version"},
      {with("\"broker\":7", "\"broker\":7.5"), "broker"},
      {with("\"partition\":0", "\"partition\":\"0\""), "partition"},
      {with("\"bytes_in_per_sec\":100.5", "\"bytes_in_per_sec\":-1"), "bytes_in_per_sec"},
      {with("\"leader\":true", "\"leader\":1"), "leader"},
      {with("\"parts\":1", "\"parts\":0"), "part"},
      {with("\"window_ms\":10000", "\"window_ms\":0"), "window_ms"},
      {"not json", "metrics sample"},
      {"{}", "version"},
  };
  for (const Case& c : cases) {
    auto r = DecodeMetricsSample(c.value);
    ASSERT_FALSE(r.ok()) << c.value;
    EXPECT_EQ(r.error().code, Errc::kCorrupt);
    EXPECT_NE(r.error().message.find(c.mentions), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace strata::balancer
