#include "protocol/request_registry.h"

#include <fmt/format.h>

#include <algorithm>

#include "protocol/all_requests.h"
#include "protocol/message.h"

namespace strata::protocol {
namespace {

template <class... Ms>
std::vector<ApiRange> BuildRanges(RequestList<Ms...>) {
  std::vector<ApiRange> v{
      ApiRange{Ms::kApiKey, Ms::kMinVersion, Ms::kMaxVersion, Ms::kFirstFlexible}...};
  std::sort(v.begin(), v.end(), [](const ApiRange& a, const ApiRange& b) { return a.key < b.key; });
  return v;
}

template <class M>
Status DecodeAs(int16_t version, MutableByteView body) {
  if (version < M::kMinVersion || version > M::kMaxVersion) {
    return MakeError(Errc::kUnsupported,
                     fmt::format("api key {} version {} not supported", M::kApiKey, version));
  }
  auto r = Decode<M>(body, version, IsFlexible<M>(version));
  if (!r.ok()) return r.take_error();
  return Status::Ok();
}

template <class... Ms>
Status Dispatch(RequestList<Ms...>, int16_t key, int16_t version, MutableByteView body) {
  Status st = MakeError(Errc::kUnsupported, fmt::format("unknown api key {}", key));
  // Short-circuits at the matching type.
  (void)((key == Ms::kApiKey ? (st = DecodeAs<Ms>(version, body), true) : false) || ...);
  return st;
}

}  // namespace

const std::vector<ApiRange>& SupportedApis() {
  static const std::vector<ApiRange> kApis = BuildRanges(AllRequests{});
  return kApis;
}

const ApiRange* FindApi(int16_t key) {
  const auto& apis = SupportedApis();
  auto it = std::lower_bound(apis.begin(), apis.end(), key,
                             [](const ApiRange& a, int16_t k) { return a.key < k; });
  if (it == apis.end() || it->key != key) return nullptr;
  return &*it;
}

bool RequestIsFlexible(int16_t key, int16_t version) {
  const ApiRange* api = FindApi(key);
  return api != nullptr && api->first_flexible <= api->max && version >= api->first_flexible;
}

Status DecodeRequestBody(int16_t key, int16_t version, MutableByteView body) {
  return Dispatch(AllRequests{}, key, version, body);
}

}  // namespace strata::protocol
