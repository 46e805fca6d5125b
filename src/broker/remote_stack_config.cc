#include "broker/remote_stack_config.h"

#include <cstdlib>

namespace strata::broker {

namespace {

double GetDouble(const config::BrokerConfig& config, const char* name) {
  return std::strtod(config.Get(name).c_str(), nullptr);  // validated at start-up
}

std::chrono::milliseconds Ms(const config::BrokerConfig& config, const char* name) {
  return std::chrono::milliseconds(config.GetLong(name));
}

}  // namespace

tiered::RemoteStackOptions RemoteStackOptionsFrom(const config::BrokerConfig& config) {
  tiered::RemoteStackOptions o;
  o.storage.user = config.Get("strata.remote.storage.user");
  tiered::S3Options& s3 = o.storage.s3;
  s3.endpoint = config.Get("strata.remote.s3.endpoint");
  s3.region = config.Get("strata.remote.s3.region");
  s3.path_style = config.GetBool("strata.remote.s3.path.style.access");
  s3.credentials.access_key_id = config.Get("strata.remote.s3.access.key.id");
  s3.credentials.secret_access_key = config.Get("strata.remote.s3.secret.access.key");
  s3.credentials.source = "strata.remote.s3.access.key.id";
  s3.multipart_threshold =
      static_cast<uint64_t>(config.GetLong("strata.remote.s3.multipart.threshold.bytes"));
  s3.part_size = static_cast<uint64_t>(config.GetLong("strata.remote.s3.multipart.part.bytes"));
  s3.upload_parallelism = static_cast<int>(config.GetLong("strata.remote.s3.upload.parallelism"));
  s3.orphan_upload_age = Ms(config, "strata.remote.s3.multipart.orphan.age.ms");
  tiered::RetryOptions& r = o.resilience.retry;
  r.max_attempts = static_cast<int>(config.GetLong("strata.remote.retry.max.attempts"));
  r.initial_backoff = Ms(config, "strata.remote.retry.backoff.ms");
  r.max_backoff = Ms(config, "strata.remote.retry.backoff.max.ms");
  r.call_timeout = Ms(config, "strata.remote.call.timeout.ms");
  r.attempt_timeout = Ms(config, "strata.remote.attempt.timeout.ms");
  o.resilience.hedge.threshold = Ms(config, "strata.remote.hedge.delay.ms");
  o.resilience.hedge.max_hedge_ratio = GetDouble(config, "strata.remote.hedge.max.ratio");
  o.resilience.hedge_reads = o.resilience.hedge.threshold.count() > 0;
  o.resilience.breaker.failure_threshold =
      static_cast<int>(config.GetLong("strata.remote.breaker.failure.threshold"));
  o.resilience.breaker.open_duration = Ms(config, "strata.remote.breaker.open.ms");
  o.faults.get_delay_ratio = GetDouble(config, "strata.remote.fault.get.delay.ratio");
  o.faults.get_delay = Ms(config, "strata.remote.fault.get.delay.ms");
  o.faults.put_fail_ratio = GetDouble(config, "strata.remote.fault.put.fail.ratio");
  o.faults.seed = static_cast<uint64_t>(config.GetLong("strata.remote.fault.seed"));
  return o;
}

}  // namespace strata::broker
