#pragma once
// Which __consumer_offsets partition holds a group: Kafka's
// Utils.abs(groupId.hashCode()) % partitions, where hashCode is Java's
// String.hashCode over UTF-16 code units. Must match Kafka exactly so that a
// log written by either broker maps groups to the same partitions.
#include <cstdint>
#include <string_view>

namespace strata::coordinator {

// Java's String.hashCode of the string whose UTF-8 bytes are `utf8`. Invalid
// UTF-8 sequences count as U+FFFD, as Java's decoder replaces them.
int32_t JavaStringHashCode(std::string_view utf8);

// abs(hash) % partitions with Kafka's Utils.abs (INT32_MIN maps to 0).
int32_t PartitionForGroup(std::string_view group_id, int32_t partitions);

}  // namespace strata::coordinator
