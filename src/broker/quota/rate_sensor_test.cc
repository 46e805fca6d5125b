// Tests of RateSensor against hand-computed values of Kafka's Rate over a
// WindowedSum and QuotaUtils.throttleTime.
#include "broker/quota/rate_sensor.h"

#include <gtest/gtest.h>

namespace strata::broker {
namespace {

TEST(RateSensorTest, AFirstBurstIsSpreadOverSamplesMinusOneWindows) {
  RateSensor sensor;  // 11 samples of 1 s
  sensor.Record(100, 0);
  // Nothing elapsed: the window counts as 10 full seconds.
  EXPECT_EQ(sensor.WindowSizeMs(0), 10000);
  EXPECT_DOUBLE_EQ(sensor.Rate(0), 10.0);
  sensor.Record(200, 500);
  // 300 over 500 ms + 10 windows.
  EXPECT_EQ(sensor.WindowSizeMs(500), 10500);
  EXPECT_DOUBLE_EQ(sensor.Rate(500), 300.0 / 10.5);
  // (300/10.5 - 20) / 20 * 10500 = 4500.
  EXPECT_EQ(sensor.ThrottleTimeMs(20, 500), 4500);
  EXPECT_EQ(sensor.ThrottleTimeMs(300.0 / 10.5, 500), 0);  // at the bound is within it
  // Past 10 full windows the real elapsed time counts.
  EXPECT_EQ(sensor.WindowSizeMs(10700), 10700);
  EXPECT_DOUBLE_EQ(sensor.Rate(10700), 300.0 / 10.7);
}

TEST(RateSensorTest, SamplesWithNoEventInTheSpanArePurged) {
  RateSensor sensor;
  sensor.Record(100, 0);
  sensor.Record(200, 500);
  // Until its last event (500) is 11 s old the sample counts whole; then it
  // restarts empty.
  EXPECT_DOUBLE_EQ(sensor.Rate(11499), 300.0 / 11.499);
  EXPECT_DOUBLE_EQ(sensor.Rate(11500), 0.0);
  EXPECT_EQ(sensor.WindowSizeMs(11500), 10000);
  sensor.Record(50, 11600);  // into the purged sample, restarted at 11500
  EXPECT_EQ(sensor.WindowSizeMs(11600), 10100);
  EXPECT_DOUBLE_EQ(sensor.Rate(11600), 50.0 / 10.1);
}

TEST(RateSensorTest, TheRingKeepsOneOverlappingSample) {
  RateSensor sensor(2, 1000);
  for (int64_t t : {0, 1000, 2000, 3000}) sensor.Record(10, t);
  // Samples start at 3000 (reusing the 0 slot), 1000 and 2000. At 3000 the one
  // from 1000 has had no event for 2 windows and is purged; 2000 and 3000
  // remain: 20 over the 1 s since 2000.
  EXPECT_EQ(sensor.WindowSizeMs(3000), 1000);
  EXPECT_DOUBLE_EQ(sensor.Rate(3000), 20.0);
  // At 3999 the sample from 2000 still overlaps the span.
  EXPECT_EQ(sensor.WindowSizeMs(3999), 1999);
  EXPECT_DOUBLE_EQ(sensor.Rate(3999), 20.0 / 1.999);
}

TEST(RateSensorTest, ThrottleTimeMatchesQuotaUtils) {
  // QuotaUtilsTest: observed 100 against a quota of 50 over 3 samples -> 2000.
  RateSensor sensor(3, 1000);
  EXPECT_EQ(sensor.RecordAndGetThrottleTimeMs(200, 50, 0), 2000);  // 200 / 2 s = 100
  EXPECT_DOUBLE_EQ(sensor.Rate(0), 100.0);
  // 55 against 50 over 2 windows -> 200 ms; rounded half up as Math.round.
  RateSensor other(3, 1000);
  other.Record(110, 0);
  EXPECT_EQ(other.ThrottleTimeMs(50, 0), 200);
  EXPECT_EQ(other.ThrottleTimeMs(54.9, 0), 4);  // 0.1/54.9*2000 = 3.64
  // A negative value takes a record back.
  other.Record(-110, 0);
  EXPECT_DOUBLE_EQ(other.Rate(0), 0.0);
  EXPECT_EQ(other.last_record_ms(), 0);
}

}  // namespace
}  // namespace strata::broker
