// ApiVersions (18): the version ranges this broker serves. An unsupported
// ApiVersions version gets a v0 body with UNSUPPORTED_VERSION and our
// ApiVersions range, so the client can retry (KIP-511). The response header is
// always v0.
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

HandlerResult HandleApiVersions(BrokerContext&, net::Request& request) {
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
  return std::optional<Bytes>(EncodeV0Header(request, response, version));
}

}  // namespace strata::kafka
