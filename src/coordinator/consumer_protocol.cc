#include "coordinator/consumer_protocol.h"

namespace strata::coordinator {

Result<std::vector<std::string>> ParseSubscriptionTopics(ByteView metadata) {
  size_t pos = 0;
  auto need = [&](size_t n) { return metadata.size() - pos >= n; };
  if (!need(2)) return MakeError(Errc::kCorrupt, "subscription shorter than its version");
  auto version = static_cast<int16_t>(LoadBE16(metadata.data()));
  pos += 2;
  if (version < 0) return MakeError(Errc::kCorrupt, "negative subscription version");
  if (!need(4)) return MakeError(Errc::kCorrupt, "subscription without topic count");
  auto count = static_cast<int32_t>(LoadBE32(metadata.data() + pos));
  pos += 4;
  if (count < 0 || static_cast<size_t>(count) > metadata.size() / 2) {
    return MakeError(Errc::kCorrupt, "bad subscription topic count");
  }
  std::vector<std::string> topics;
  topics.reserve(count);
  for (int32_t i = 0; i < count; ++i) {
    if (!need(2)) return MakeError(Errc::kCorrupt, "truncated subscription topic");
    auto len = static_cast<int16_t>(LoadBE16(metadata.data() + pos));
    pos += 2;
    if (len < 0 || !need(static_cast<size_t>(len))) {
      return MakeError(Errc::kCorrupt, "bad subscription topic length");
    }
    topics.emplace_back(reinterpret_cast<const char*>(metadata.data() + pos), len);
    pos += len;
  }
  return topics;
}

}  // namespace strata::coordinator
