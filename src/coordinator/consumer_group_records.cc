#include "coordinator/consumer_group_records.h"

#include <fmt/format.h>

#include <type_traits>

#include "protocol/wire.h"

namespace strata::coordinator {

namespace {

using protocol::WireReader;
using protocol::WireWriter;

bool HasMember(ConsumerRecordType t) {
  return t == ConsumerRecordType::kMemberMetadata ||
         t == ConsumerRecordType::kTargetAssignmentMember ||
         t == ConsumerRecordType::kCurrentMemberAssignment;
}

// []TopicPartitions {TopicId uuid, Partitions []int32}, flexible.
template <class IO>
void SerdeAssignment(IO& io, TopicAssignment& a) {
  std::vector<std::pair<TopicId, std::vector<int32_t>>> list;
  for (const auto& [t, ps] : a) list.emplace_back(t, std::vector<int32_t>(ps.begin(), ps.end()));
  io.array(list, [&](std::pair<TopicId, std::vector<int32_t>>& e) {
    io.uuid(e.first);
    io.array(e.second);
    io.tagged_fields();
  });
  if constexpr (std::is_same_v<IO, WireReader>) {
    a.clear();
    for (auto& [t, ps] : list) a[t].insert(ps.begin(), ps.end());
  }
}

template <class IO>
void SerdeValue(IO& io, ConsumerGroupRecord& r) {
  switch (r.type) {
    case ConsumerRecordType::kGroupMetadata: {
      io.i32(r.group_epoch);
      std::optional<int64_t> hash;
      if (r.metadata_hash != 0) hash = r.metadata_hash;
      io.tagged_fields(0, hash, [](auto& tio, int64_t& h) { tio.i64(h); });
      if (hash) r.metadata_hash = *hash;
      return;
    }
    case ConsumerRecordType::kPartitionMetadata:
      // Only ever deleted here; a value Kafka 3.x wrote is not needed
      // (the metadata hash replaces it), so its fields are not read.
      return;
    case ConsumerRecordType::kMemberMetadata: {
      ConsumerMemberMetadata& m = r.member;
      io.nullable_str(m.instance_id);
      io.nullable_str(m.rack_id);
      io.str(m.client_id);
      io.str(m.client_host);
      io.array(m.subscribed_topic_names);
      io.nullable_str(m.subscribed_topic_regex);
      io.i32(m.rebalance_timeout_ms);
      io.nullable_str(m.server_assignor);
      io.tagged_fields();
      return;
    }
    case ConsumerRecordType::kTargetAssignmentMetadata:
      io.i32(r.assignment_epoch);
      io.tagged_fields();
      return;
    case ConsumerRecordType::kTargetAssignmentMember:
      SerdeAssignment(io, r.target);
      io.tagged_fields();
      return;
    case ConsumerRecordType::kCurrentMemberAssignment: {
      MemberAssignment& c = r.current;
      io.i32(c.member_epoch);
      io.i32(c.previous_member_epoch);
      int8_t state = static_cast<int8_t>(c.state);
      io.i8(state);
      switch (state) {
        case 0:
        case 1:
        case 2:
          c.state = static_cast<MemberState>(state);
          break;
        default:
          c.state = MemberState::kUnknown;
      }
      SerdeAssignment(io, c.assigned);
      SerdeAssignment(io, c.pending_revocation);
      io.tagged_fields();
      return;
    }
  }
}

}  // namespace

ConsumerGroupRecord GroupEpochRecord(const std::string& group, int32_t epoch, int64_t hash) {
  ConsumerGroupRecord r;
  r.type = ConsumerRecordType::kGroupMetadata;
  r.group_id = group;
  r.group_epoch = epoch;
  r.metadata_hash = hash;
  return r;
}

ConsumerGroupRecord MemberMetadataRecord(const std::string& group, const std::string& member,
                                         ConsumerMemberMetadata metadata) {
  ConsumerGroupRecord r;
  r.type = ConsumerRecordType::kMemberMetadata;
  r.group_id = group;
  r.member_id = member;
  r.member = std::move(metadata);
  return r;
}

ConsumerGroupRecord TargetEpochRecord(const std::string& group, int32_t epoch) {
  ConsumerGroupRecord r;
  r.type = ConsumerRecordType::kTargetAssignmentMetadata;
  r.group_id = group;
  r.assignment_epoch = epoch;
  return r;
}

ConsumerGroupRecord TargetMemberRecord(const std::string& group, const std::string& member,
                                       TopicAssignment target) {
  ConsumerGroupRecord r;
  r.type = ConsumerRecordType::kTargetAssignmentMember;
  r.group_id = group;
  r.member_id = member;
  r.target = std::move(target);
  return r;
}

ConsumerGroupRecord CurrentAssignmentRecord(const std::string& group, const std::string& member,
                                            MemberAssignment current) {
  ConsumerGroupRecord r;
  r.type = ConsumerRecordType::kCurrentMemberAssignment;
  r.group_id = group;
  r.member_id = member;
  r.current = std::move(current);
  return r;
}

ConsumerGroupRecord Tombstone(ConsumerRecordType type, const std::string& group,
                              const std::string& member) {
  ConsumerGroupRecord r;
  r.type = type;
  r.group_id = group;
  r.member_id = member;
  r.tombstone = true;
  return r;
}

CoordinatorRecord EncodeConsumerGroupRecord(const ConsumerGroupRecord& record) {
  CoordinatorRecord out;
  WireWriter key(out.key, false);
  key.i16(static_cast<int16_t>(record.type));
  key.str(record.group_id);
  if (HasMember(record.type)) key.str(record.member_id);
  if (record.tombstone) return out;
  out.value.emplace();
  WireWriter value(*out.value, false);
  value.i16(0);
  value.set_flexible(true);
  SerdeValue(value, const_cast<ConsumerGroupRecord&>(record));  // NOLINT: the writer only reads
  return out;
}

Result<std::optional<ConsumerGroupRecord>> DecodeConsumerGroupRecord(
    ByteView key, const std::optional<ByteView>& value) {
  Bytes key_copy(key.begin(), key.end());  // WireReader wants a mutable view
  WireReader k(MutableByteView(key_copy), false);
  int16_t type = -1;
  k.i16(type);
  if (!k.ok()) return MakeError(Errc::kCorrupt, "record key: " + k.error());
  if (type < 3 || type > 8) return std::optional<ConsumerGroupRecord>();
  ConsumerGroupRecord r;
  r.type = static_cast<ConsumerRecordType>(type);
  k.str(r.group_id);
  if (HasMember(r.type)) k.str(r.member_id);
  if (!k.ok()) return MakeError(Errc::kCorrupt, fmt::format("record key {}: {}", type, k.error()));
  if (!value) {
    r.tombstone = true;
    return std::optional<ConsumerGroupRecord>(std::move(r));
  }
  Bytes value_copy(value->begin(), value->end());
  WireReader v(MutableByteView(value_copy), false);
  int16_t version = -1;
  v.i16(version);
  if (!v.ok() || version != 0) {
    return MakeError(Errc::kUnsupported,
                     fmt::format("consumer group record {} value version {}", type, version));
  }
  v.set_flexible(true);
  SerdeValue(v, r);
  if (!v.ok()) {
    return MakeError(Errc::kCorrupt, fmt::format("consumer group record {}: {}", type, v.error()));
  }
  return std::optional<ConsumerGroupRecord>(std::move(r));
}

}  // namespace strata::coordinator
