#pragma once
// The "consumer" embedded protocol that Kafka consumers put in JoinGroup
// metadata (ConsumerProtocolSubscription). The coordinator only needs the
// subscribed topics, which every version carries in its v0 prefix:
//   version int16 | topics: int32 count, int16-length strings | ...
// (user data, owned partitions, generation and rack follow in later versions
// and are ignored, as Kafka's coordinator does).
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace strata::coordinator {

inline constexpr const char* kConsumerProtocolType = "consumer";

// The topics of a subscription; kCorrupt when the bytes are too short or the
// version is negative.
Result<std::vector<std::string>> ParseSubscriptionTopics(ByteView metadata);

}  // namespace strata::coordinator
