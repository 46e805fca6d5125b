// ApiVersions (18): the version ranges this broker serves. An unsupported
// ApiVersions version gets a v0 body with UNSUPPORTED_VERSION and our
// ApiVersions range, so the client can retry (KIP-511). The response header is
// always v0. v3+ carries the feature levels (KIP-584).
#include "protocol/messages/api_versions.h"

#include <regex>

#include "kafka/handlers/api_table.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"
#include "protocol/request_registry.h"

namespace strata::kafka {

namespace {

using protocol::ApiVersionsRequest;
using protocol::ApiVersionsResponse;
using protocol::ErrorCode;

Bytes EncodeV0Header(const net::Request& request, ApiVersionsResponse& response, int16_t version) {
  Bytes out;
  protocol::WriteResponseHeader(out, request.header.correlation_id, /*flexible_header=*/false);
  protocol::WireWriter writer(out, version >= ApiVersionsRequest::kFirstFlexible);
  response.Serde(writer, version);
  return out;
}

bool ValidSoftwareField(const std::string& s) {
  static const std::regex kPattern("[a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?");
  return std::regex_match(s, kPattern);
}

}  // namespace

// KIP-584 features: transaction.version is the one clients act on here.
void AddFeatures(const BrokerContext& ctx, ApiVersionsResponse& response) {
  const auto level = static_cast<int16_t>(ctx.config.GetLong("strata.transaction.version"));
  response.supported_features =
      std::vector<ApiVersionsResponse::SupportedFeature>{{"transaction.version", 0, 2}};
  // Finalized once, when the cluster is made; clients keep the newest epoch.
  response.finalized_features_epoch = 1;
  response.finalized_features.emplace();
  // Level 0 is Kafka's "off": not listed.
  if (level > 0) response.finalized_features->push_back({"transaction.version", level, level});
}

HandlerResult HandleApiVersions(BrokerContext& ctx, net::Request& request) {
  int16_t version = request.header.api_version;
  ApiVersionsResponse response;
  if (version < ApiVersionsRequest::kMinVersion || version > ApiVersionsRequest::kMaxVersion) {
    response.error_code = Code(ErrorCode::kUnsupportedVersion);
    response.api_keys.push_back({ApiVersionsRequest::kApiKey, ApiVersionsRequest::kMinVersion,
                                 ApiVersionsRequest::kMaxVersion});
    return std::optional<Bytes>(EncodeV0Header(request, response, 0));
  }
  auto decoded = DecodeRequest<ApiVersionsRequest>(request);
  if (!decoded.ok() || (version >= 3 && (!ValidSoftwareField(decoded->client_software_name) ||
                                         !ValidSoftwareField(decoded->client_software_version)))) {
    response.error_code = Code(ErrorCode::kInvalidRequest);
    return std::optional<Bytes>(EncodeV0Header(request, response, 0));
  }
  for (const ApiHandler& served : ServedApis()) {
    if (!served.advertised) continue;
    const protocol::ApiRange* api = protocol::FindApi(served.key);
    if (api != nullptr) response.api_keys.push_back({api->key, api->min, api->max});
  }
  if (version >= 3) AddFeatures(ctx, response);
  if (request.auth != nullptr) request.auth->MarkApiVersionsSeen();
  // Encoded here rather than by EncodeResponse, so charged here (KIP-219).
  response.throttle_time_ms = net::ChargeRequestTime(request);
  return std::optional<Bytes>(EncodeV0Header(request, response, version));
}

}  // namespace strata::kafka
