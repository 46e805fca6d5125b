#pragma once
// The records the group coordinator keeps in __consumer_offsets, in Kafka's
// formats (group-coordinator/src/main/resources/common/message/*.json) so a
// log written by Kafka can be read here and vice versa:
//   key   = int16 key version + key fields (never flexible)
//           1 (or legacy 0): OffsetCommitKey {group, topic, partition}
//           2: GroupMetadataKey {group}
//           other versions belong to newer protocols and are skipped
//   value = int16 value version + value fields (flexible from v4), or null
//           (a tombstone: the offset or the group was deleted)
// We write OffsetCommitValue v3 and GroupMetadataValue v3, as Kafka 3.x/4.x do,
// and read versions 0-4 of both.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/result.h"

namespace strata::coordinator {

inline constexpr int16_t kOffsetCommitKeyVersion = 1;
inline constexpr int16_t kGroupMetadataKeyVersion = 2;
inline constexpr int16_t kOffsetCommitValueVersion = 3;
inline constexpr int16_t kGroupMetadataValueVersion = 3;

struct OffsetCommitKey {
  std::string group;
  std::string topic;
  int32_t partition = 0;
  bool operator==(const OffsetCommitKey&) const = default;
};

struct OffsetCommitValue {
  int64_t offset = 0;
  int32_t leader_epoch = -1;  // v3+
  std::string metadata;
  int64_t commit_timestamp = 0;
  int64_t expire_timestamp = -1;  // v1 only
  bool operator==(const OffsetCommitValue&) const = default;
};

struct GroupMetadataValue {
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;  // v3+
    std::string client_id;
    std::string client_host;
    int32_t rebalance_timeout = -1;  // v1+ (-1 when read from v0)
    int32_t session_timeout = 0;
    Bytes subscription;
    Bytes assignment;
    bool operator==(const Member&) const = default;
  };
  std::string protocol_type;
  int32_t generation = 0;
  std::optional<std::string> protocol;
  std::optional<std::string> leader;
  int64_t current_state_timestamp = -1;  // v2+
  std::vector<Member> members;
  bool operator==(const GroupMetadataValue&) const = default;
};

// A decoded record key.
struct RecordKey {
  enum class Kind { kOffsetCommit, kGroupMetadata, kOther };
  Kind kind = Kind::kOther;
  int16_t version = -1;
  OffsetCommitKey offset;  // kOffsetCommit
  std::string group;       // kGroupMetadata (also offset.group for kOffsetCommit)
};

Bytes EncodeOffsetCommitKey(const OffsetCommitKey& key);
Bytes EncodeGroupMetadataKey(const std::string& group);
Bytes EncodeOffsetCommitValue(const OffsetCommitValue& value,
                              int16_t version = kOffsetCommitValueVersion);
Bytes EncodeGroupMetadataValue(const GroupMetadataValue& value,
                               int16_t version = kGroupMetadataValueVersion);

// kCorrupt on truncated or malformed input; unknown key versions are kOther.
Result<RecordKey> DecodeRecordKey(ByteView key);
// kUnsupported for versions outside 0-4.
Result<OffsetCommitValue> DecodeOffsetCommitValue(ByteView value);
Result<GroupMetadataValue> DecodeGroupMetadataValue(ByteView value);

}  // namespace strata::coordinator
