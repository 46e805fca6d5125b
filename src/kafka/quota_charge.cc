#include "kafka/quota_charge.h"

#include <algorithm>

#include "broker/client_quotas.h"
#include "kafka/authorization.h"
#include "protocol/api_key.h"

namespace strata::kafka {

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Quotas are kept per user (the principal's name) and client id.
int32_t Record(broker::ClientQuotaManager& manager, net::Request& request, double value) {
  const std::string& user = RequestPrincipal(request).name;
  const std::string client_id = request.header.client_id.value_or("");
  const int64_t throttle = manager.RecordAndGetThrottleTimeMs(user, client_id, value, NowMs());
  const auto ms = static_cast<int32_t>(std::min<int64_t>(throttle, INT32_MAX));
  request.throttle_ms = std::max(request.throttle_ms, ms);
  return ms;
}

}  // namespace

int32_t ChargeProduce(BrokerContext& ctx, net::Request& request, size_t bytes) {
  if (ctx.quotas == nullptr) return 0;
  return Record(ctx.quotas->produce(), request, static_cast<double>(bytes));
}

int32_t ChargeFetch(BrokerContext& ctx, net::Request& request, size_t bytes) {
  if (ctx.quotas == nullptr) return 0;
  return Record(ctx.quotas->fetch(), request, static_cast<double>(bytes));
}

void UnchargeFetch(BrokerContext& ctx, net::Request& request, size_t bytes) {
  if (ctx.quotas == nullptr) return;
  ctx.quotas->fetch().Unrecord(RequestPrincipal(request).name,
                               request.header.client_id.value_or(""), static_cast<double>(bytes),
                               NowMs());
}

int32_t FetchBytesBound(BrokerContext& ctx, const net::Request& request) {
  if (ctx.quotas == nullptr) return INT32_MAX;
  const double bound = ctx.quotas->fetch().MaxValueInQuotaWindow(
      RequestPrincipal(request).name, request.header.client_id.value_or(""));
  // At least one byte: a fetch's max_bytes of 0 reads as no limit.
  return static_cast<int32_t>(std::clamp(bound, 1.0, static_cast<double>(INT32_MAX)));
}

int32_t RequestTimeQuota::Charge(net::Request& request) {
  using protocol::ApiKey;
  const int16_t key = request.header.api_key;
  if (ctx_.quotas == nullptr || request.quota_exempt ||
      key == static_cast<int16_t>(ApiKey::kJoinGroup) ||
      key == static_cast<int16_t>(ApiKey::kSyncGroup)) {
    return 0;
  }
  const auto took = std::chrono::steady_clock::now() - request.started - request.waited;
  const double ms = std::max(0.0, std::chrono::duration<double, std::milli>(took).count());
  return Record(ctx_.quotas->request(), request, ms);
}

}  // namespace strata::kafka
