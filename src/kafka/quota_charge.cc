#include "kafka/quota_charge.h"

#include <algorithm>

#include "broker/client_quotas.h"
#include "kafka/authorization.h"

namespace strata::kafka {

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Quotas are kept per user (the principal's name) and client id.
int32_t Charge(broker::ClientQuotaManager& manager, net::Request& request, double value) {
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
  return Charge(ctx.quotas->produce(), request, static_cast<double>(bytes));
}

int32_t ChargeFetch(BrokerContext& ctx, net::Request& request, size_t bytes) {
  if (ctx.quotas == nullptr) return 0;
  return Charge(ctx.quotas->fetch(), request, static_cast<double>(bytes));
}

void ChargeRequestTime(BrokerContext& ctx, net::Request& request,
                       std::chrono::steady_clock::duration took) {
  if (ctx.quotas == nullptr) return;
  const double ms = std::chrono::duration<double, std::milli>(took).count();
  Charge(ctx.quotas->request(), request, ms);
}

}  // namespace strata::kafka
