#pragma once
// The records a KIP-848 consumer group keeps in __consumer_offsets, in
// Kafka's formats (group-coordinator's ConsumerGroup*Key/Value schemas), so
// a log written by either broker reads on the other:
//   key   = int16 record type + key fields at version 0 (never flexible)
//   value = int16 version 0 + flexible fields, or null (a tombstone)
// Types: 3 group metadata (group epoch, metadata hash in tag 0), 4 the
// partition metadata Kafka 4.1 only deletes, 5 member metadata, 6 target
// assignment epoch, 7 a member's target assignment, 8 a member's current
// assignment. A group's state is whatever replaying them gives (see
// ConsumerGroup::Replay); a heartbeat's changes are written as these records
// first and applied by replaying them after.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"
#include "coordinator/coordinator_log.h"
#include "coordinator/member_reconciliation.h"

namespace strata::coordinator {

enum class ConsumerRecordType : int16_t {
  kGroupMetadata = 3,
  kPartitionMetadata = 4,
  kMemberMetadata = 5,
  kTargetAssignmentMetadata = 6,
  kTargetAssignmentMember = 7,
  kCurrentMemberAssignment = 8,
};

// ConsumerGroupMemberMetadataValue (classic members' tagged metadata is not
// kept: Strata's consumer groups hold consumer-protocol members only).
struct ConsumerMemberMetadata {
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::string client_id;
  std::string client_host;
  std::vector<std::string> subscribed_topic_names;  // sorted
  std::optional<std::string> subscribed_topic_regex;
  int32_t rebalance_timeout_ms = -1;
  std::optional<std::string> server_assignor;
  bool operator==(const ConsumerMemberMetadata&) const = default;
};

// One record; which fields count depends on `type`. `tombstone`: the value
// is null (the thing the key names is deleted).
struct ConsumerGroupRecord {
  ConsumerRecordType type = ConsumerRecordType::kGroupMetadata;
  std::string group_id;
  std::string member_id;  // types 5, 7, 8
  bool tombstone = false;
  int32_t group_epoch = 0;        // 3
  int64_t metadata_hash = 0;      // 3
  ConsumerMemberMetadata member;  // 5
  int32_t assignment_epoch = 0;   // 6
  TopicAssignment target;         // 7
  MemberAssignment current;       // 8
  bool operator==(const ConsumerGroupRecord&) const = default;
};

ConsumerGroupRecord GroupEpochRecord(const std::string& group, int32_t epoch, int64_t hash);
ConsumerGroupRecord MemberMetadataRecord(const std::string& group, const std::string& member,
                                         ConsumerMemberMetadata metadata);
ConsumerGroupRecord TargetEpochRecord(const std::string& group, int32_t epoch);
ConsumerGroupRecord TargetMemberRecord(const std::string& group, const std::string& member,
                                       TopicAssignment target);
ConsumerGroupRecord CurrentAssignmentRecord(const std::string& group, const std::string& member,
                                            MemberAssignment current);
ConsumerGroupRecord Tombstone(ConsumerRecordType type, const std::string& group,
                              const std::string& member = "");

CoordinatorRecord EncodeConsumerGroupRecord(const ConsumerGroupRecord& record);
// nullopt when the key is not a consumer group record (offsets, classic
// groups, share and streams groups); kCorrupt on malformed bytes.
Result<std::optional<ConsumerGroupRecord>> DecodeConsumerGroupRecord(
    ByteView key, const std::optional<ByteView>& value);

}  // namespace strata::coordinator
