#pragma once
// Which partition of a coordinator's internal topic holds a key: a group id
// in __consumer_offsets, a transactional id in __transaction_state. Kafka's
// Utils.abs(key.hashCode()) % partitions, where hashCode is Java's
// String.hashCode over UTF-16 code units. Must match Kafka exactly so that a
// log written by either broker maps keys to the same partitions.
#include <cstdint>
#include <string_view>

namespace strata::coordinator {

// Java's String.hashCode of the string whose UTF-8 bytes are `utf8`. Invalid
// UTF-8 sequences count as U+FFFD, as Java's decoder replaces them.
int32_t JavaStringHashCode(std::string_view utf8);

// abs(hash) % partitions with Kafka's Utils.abs (INT32_MIN maps to 0).
int32_t PartitionForKey(std::string_view key, int32_t partitions);

}  // namespace strata::coordinator
