#include "broker/quota/client_quota_manager.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <utility>

namespace strata::broker {

namespace quota_manager_impl {

// ClientRequestQuotaManager.NANOS_TO_PERCENTAGE_PER_SECOND, per ms: a thread
// busy for a whole second records 100 (percent).
constexpr double kMsToPercent = 100.0 / 1000.0;

// Kafka returns throttle times as a Java int.
constexpr int64_t kMaxIntThrottleMs = std::numeric_limits<int32_t>::max();

}  // namespace quota_manager_impl

ClientQuotaManager::ClientQuotaManager(QuotaType type, int samples, int64_t sample_ms)
    : type_(type),
      samples_(samples),
      sample_ms_(sample_ms),
      max_throttle_ms_(type == QuotaType::kRequest ? sample_ms
                                                   : quota_manager_impl::kMaxIntThrottleMs) {}

void ClientQuotaManager::UpdateConfigs(QuotaConfigs configs) {
  QuotasOfType quotas(configs, type_);
  std::unique_lock lock(mu_);
  quotas_ = std::move(quotas);
  // Kafka's updateQuotaMetricConfigs: each live sensor takes its tags' quota.
  for (auto& [tags, entry] : sensors_) {
    std::optional<ResolvedQuota> quota = quotas_.ForTags(tags);
    entry.bound = quota ? std::optional<double>(quota->bound) : std::nullopt;
  }
}

double ClientQuotaManager::ToRecorded(double value) const {
  return type_ == QuotaType::kRequest ? value * quota_manager_impl::kMsToPercent : value;
}

double ClientQuotaManager::BurstSeconds() const {
  // A byte-rate bucket holds a whole quota window (quota.window.num samples),
  // what Kafka's sampled rate lets a new client send at once, give or take a
  // sample. The sampled rate of request time spreads a first record over at
  // least samples - 1 windows (RateSensor).
  const double window_seconds = static_cast<double>(sample_ms_) / 1000;
  return (type_ == QuotaType::kRequest ? samples_ - 1 : samples_) * window_seconds;
}

ClientQuotaManager::Target ClientQuotaManager::SensorFor(const std::string& user,
                                                         const std::string& client_id,
                                                         int64_t now_ms) {
  {
    std::shared_lock lock(mu_);
    if (quotas_.empty()) return {};
    auto it = sensors_.find(quotas_.MetricTags(user, client_id));
    if (it != sensors_.end()) return {it->second.sensor, it->second.bound, it->second.bucket};
  }
  std::unique_lock lock(mu_);  // the configs may have changed in between
  if (quotas_.empty()) return {};
  QuotaMetricTags tags = quotas_.MetricTags(user, client_id);
  auto it = sensors_.find(tags);
  if (it == sensors_.end()) {
    std::optional<ResolvedQuota> quota = quotas_.ForTags(tags);
    Entry entry{
        quota ? std::optional<double>(quota->bound) : std::nullopt,
        std::make_shared<RateSensor>(samples_, sample_ms_), now_ms,
        type_ == QuotaType::kRequest ? nullptr : std::make_shared<TokenBucket>(BurstSeconds())};
    it = sensors_.emplace(std::move(tags), std::move(entry)).first;
  }
  return {it->second.sensor, it->second.bound, it->second.bucket};
}

int64_t ClientQuotaManager::RecordAndGetThrottleTimeMs(const std::string& user,
                                                       const std::string& client_id, double value,
                                                       int64_t now_ms) {
  Target target = SensorFor(user, client_id, now_ms);
  if (!target.sensor) return 0;
  const double recorded = ToRecorded(value);
  if (!target.bound) {  // Kafka's bound is then Long.MAX_VALUE: never exceeded
    target.sensor->Record(recorded, now_ms);
    return 0;
  }
  if (target.bucket) {
    target.sensor->Record(recorded, now_ms);  // the rate, for what is observed
    return std::min(target.bucket->TakeAndGetThrottleMs(recorded, *target.bound, now_ms),
                    max_throttle_ms_);
  }
  const int64_t throttle_ms =
      target.sensor->RecordAndGetThrottleTimeMs(recorded, *target.bound, now_ms);
  return std::min(throttle_ms, max_throttle_ms_);
}

void ClientQuotaManager::RecordNoThrottle(const std::string& user, const std::string& client_id,
                                          double value, int64_t now_ms) {
  Target target = SensorFor(user, client_id, now_ms);
  if (!target.sensor) return;
  target.sensor->Record(ToRecorded(value), now_ms);
  if (target.bucket && target.bound) {
    (void)target.bucket->TakeAndGetThrottleMs(ToRecorded(value), *target.bound, now_ms);
  }
}

void ClientQuotaManager::Unrecord(const std::string& user, const std::string& client_id,
                                  double value, int64_t now_ms) {
  RecordNoThrottle(user, client_id, -value, now_ms);
}

std::optional<double> ClientQuotaManager::Bound(const std::string& user,
                                                const std::string& client_id) const {
  std::shared_lock lock(mu_);
  std::optional<ResolvedQuota> quota = quotas_.Resolve(user, client_id);
  if (!quota) return std::nullopt;
  return quota->bound;
}

double ClientQuotaManager::MaxValueInQuotaWindow(const std::string& user,
                                                 const std::string& client_id) const {
  std::optional<double> bound = Bound(user, client_id);
  if (!bound) return std::numeric_limits<double>::max();
  // Kafka's getMaxValueInQuotaWindow: samples - 1 windows' worth.
  return *bound * static_cast<double>(samples_ - 1) * static_cast<double>(sample_ms_) / 1000;
}

QuotaMetricTags ClientQuotaManager::MetricTags(const std::string& user,
                                               const std::string& client_id) const {
  std::shared_lock lock(mu_);
  return quotas_.MetricTags(user, client_id);
}

// Sensor.hasExpired: idle for strictly more than the expiration time, counting
// from creation until the first record.
void ClientQuotaManager::ExpireIdleSensors(int64_t now_ms) {
  std::unique_lock lock(mu_);
  for (auto it = sensors_.begin(); it != sensors_.end();) {
    const int64_t last = std::max(it->second.created_ms, it->second.sensor->last_record_ms());
    if (now_ms - last > kInactiveSensorExpirationMs) {
      it = sensors_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t ClientQuotaManager::sensor_count() const {
  std::shared_lock lock(mu_);
  return sensors_.size();
}

}  // namespace strata::broker
