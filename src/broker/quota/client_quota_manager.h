#pragma once
// ClientQuotaManager: Kafka's client quotas of one type (produce bytes, fetch
// bytes or request time) on this broker, as Kafka's ClientQuotaManager and
// ClientRequestQuotaManager (server/.../quota/). Each client is mapped to
// metric tags (QuotasOfType::MetricTags) and clients with equal tags share one
// RateSensor, whose bound is the quota of those tags. A request's value is
// recorded first and the throttle time computed after, so an over-quota
// request still goes through and the client is then held back (its channel
// muted by the caller, KIP-219) until its rate is back at the bound.
//
// Nothing is recorded while no quota of this type is configured (Kafka's
// quotasEnabled()); once one is, every client is recorded, those without a
// quota in an unbounded sensor, so a quota added later sees their history.
// Sensors idle for an hour are dropped by ExpireIdleSensors.
//
// Ownership: the manager owns its sensors and its config snapshot. The caller
// feeds configs (UpdateConfigs) and times; nothing here does I/O.
// Thread-safety: all methods are safe from any thread. Lookups of existing
// sensors share a reader lock; creating, expiring and reconfiguring take it
// exclusively; recording locks only the one sensor.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>

#include "broker/quota/client_quota_entity.h"
#include "broker/quota/rate_sensor.h"
#include "broker/quota/token_bucket.h"

namespace strata::broker {

class ClientQuotaManager {
 public:
  // Kafka's INACTIVE_SENSOR_EXPIRATION_TIME_SECONDS.
  static constexpr int64_t kInactiveSensorExpirationMs = 3600 * 1000;

  // `samples` and `sample_ms`: quota.window.num and quota.window.size.seconds
  // (in ms), as RateSensor.
  ClientQuotaManager(QuotaType type, int samples = RateSensor::kDefaultSamples,
                     int64_t sample_ms = RateSensor::kDefaultSampleMs);

  // Takes a new config snapshot (only the entries setting this type matter).
  // Existing sensors keep their history and take their tags' new bound.
  void UpdateConfigs(QuotaConfigs configs);

  // Records `value` for the client and returns how long to throttle it (0:
  // within its quota, no quota, or no quota of this type at all). `value` is
  // bytes for kProduce/kFetch; for kRequest the request's thread time in ms,
  // recorded as percent of one thread (ms * 100 / 1000, Kafka's
  // nanosToPercentage), against request_percentage. Request throttles are
  // capped at one window (sample_ms, ClientRequestQuotaManager's
  // maxThrottleTimeMs); byte throttles are not capped, beyond Java's int range.
  int64_t RecordAndGetThrottleTimeMs(const std::string& user, const std::string& client_id,
                                     double value, int64_t now_ms);
  // Records without checking the quota (Kafka's recordNoThrottle, e.g. network
  // thread time after the response was sent); same units as above.
  void RecordNoThrottle(const std::string& user, const std::string& client_id, double value,
                        int64_t now_ms);
  // Takes back a value recorded at `now_ms` (Kafka's unrecordQuotaSensor: a
  // throttled fetch sends no data, so its bytes must not count).
  void Unrecord(const std::string& user, const std::string& client_id, double value,
                int64_t now_ms);

  // The quota that applies to the client, nullopt when none.
  std::optional<double> Bound(const std::string& user, const std::string& client_id) const;
  // The largest value a client may record in one go without being throttled
  // for it alone, i.e. after no records for a whole quota window (Kafka's
  // getMaxValueInQuotaWindow, which caps a consumer's fetch size): bound *
  // (samples - 1) * window seconds, within a byte-rate token bucket's
  // capacity; unlimited when no quota applies.
  double MaxValueInQuotaWindow(const std::string& user, const std::string& client_id) const;
  // The tags (and so the sensor) the client maps to under the current configs.
  QuotaMetricTags MetricTags(const std::string& user, const std::string& client_id) const;

  // Drops sensors with no record for more than an hour.
  void ExpireIdleSensors(int64_t now_ms);
  size_t sensor_count() const;

  QuotaType type() const { return type_; }
  // The largest throttle RecordAndGetThrottleTimeMs returns.
  int64_t max_throttle_ms() const { return max_throttle_ms_; }

 private:
  struct Entry {
    std::optional<double> bound;  // nullopt: no quota for these tags
    std::shared_ptr<RateSensor> sensor;
    int64_t created_ms = 0;
    // Byte rates throttle by a token bucket (token_bucket.h).
    std::shared_ptr<TokenBucket> bucket;
  };
  struct Target {  // what one call records into
    std::shared_ptr<RateSensor> sensor;
    std::optional<double> bound;
    std::shared_ptr<TokenBucket> bucket;
  };

  // The client's sensor, created if needed; nullptr sensor when no quota of
  // this type is configured.
  Target SensorFor(const std::string& user, const std::string& client_id, int64_t now_ms);
  // Kafka records thread time as percent of a thread; bytes as they are.
  double ToRecorded(double value) const;
  // How many seconds of its bound a client may record at once without being
  // throttled (see MaxValueInQuotaWindow); byte rates' bucket size.
  double BurstSeconds() const;

  const QuotaType type_;
  const int samples_;
  const int64_t sample_ms_;
  const int64_t max_throttle_ms_;

  mutable std::shared_mutex mu_;
  QuotasOfType quotas_;                       // guarded by mu_
  std::map<QuotaMetricTags, Entry> sensors_;  // guarded by mu_
};

}  // namespace strata::broker
