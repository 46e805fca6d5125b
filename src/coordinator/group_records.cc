#include "coordinator/group_records.h"

#include <fmt/format.h>

#include "protocol/wire.h"

namespace strata::coordinator {

namespace {

using protocol::WireReader;
using protocol::WireWriter;

constexpr int16_t kMaxValueVersion = 4;
constexpr int16_t kFirstFlexibleValue = 4;

// One Serde per record, written once for both directions like the API
// messages in protocol/messages/. The writer never modifies its argument.
template <class IO>
void SerdeValue(IO& io, OffsetCommitValue& v, int16_t version) {
  io.i64(v.offset);
  if (version >= 3) io.i32(v.leader_epoch);
  io.str(v.metadata);
  io.i64(v.commit_timestamp);
  if (version == 1) io.i64(v.expire_timestamp);
  io.tagged_fields();
}

template <class IO>
void SerdeMember(IO& io, GroupMetadataValue::Member& m, int16_t version) {
  io.str(m.member_id);
  if (version >= 3) io.nullable_str(m.group_instance_id);
  io.str(m.client_id);
  io.str(m.client_host);
  if (version >= 1) io.i32(m.rebalance_timeout);
  io.i32(m.session_timeout);
  io.bytes(m.subscription);
  io.bytes(m.assignment);
  io.tagged_fields();
}

template <class IO>
void SerdeValue(IO& io, GroupMetadataValue& v, int16_t version) {
  io.str(v.protocol_type);
  io.i32(v.generation);
  io.nullable_str(v.protocol);
  io.nullable_str(v.leader);
  if (version >= 2) io.i64(v.current_state_timestamp);
  io.array(v.members, [&](GroupMetadataValue::Member& m) { SerdeMember(io, m, version); });
  io.tagged_fields();
}

template <class V>
Bytes EncodeValue(const V& value, int16_t version) {
  Bytes out;
  WireWriter w(out, false);
  w.i16(version);
  w.set_flexible(version >= kFirstFlexibleValue);
  SerdeValue(w, const_cast<V&>(value), version);  // NOLINT: WireWriter only reads
  return out;
}

template <class V>
Result<V> DecodeValue(ByteView data, const char* what) {
  Bytes copy(data.begin(), data.end());  // WireReader wants a mutable view
  WireReader r(MutableByteView(copy), false);
  int16_t version = -1;
  r.i16(version);
  if (!r.ok()) return MakeError(Errc::kCorrupt, fmt::format("{}: {}", what, r.error()));
  if (version < 0 || version > kMaxValueVersion) {
    return MakeError(Errc::kUnsupported, fmt::format("{} version {}", what, version));
  }
  r.set_flexible(version >= kFirstFlexibleValue);
  V value;
  SerdeValue(r, value, version);
  if (!r.ok())
    return MakeError(Errc::kCorrupt, fmt::format("{} v{}: {}", what, version, r.error()));
  return value;
}

}  // namespace

Bytes EncodeOffsetCommitKey(const OffsetCommitKey& key) {
  Bytes out;
  WireWriter w(out, false);
  w.i16(kOffsetCommitKeyVersion);
  w.str(key.group);
  w.str(key.topic);
  w.i32(key.partition);
  return out;
}

Bytes EncodeGroupMetadataKey(const std::string& group) {
  Bytes out;
  WireWriter w(out, false);
  w.i16(kGroupMetadataKeyVersion);
  w.str(group);
  return out;
}

Bytes EncodeOffsetCommitValue(const OffsetCommitValue& value, int16_t version) {
  return EncodeValue(value, version);
}

Bytes EncodeGroupMetadataValue(const GroupMetadataValue& value, int16_t version) {
  return EncodeValue(value, version);
}

Result<RecordKey> DecodeRecordKey(ByteView data) {
  Bytes copy(data.begin(), data.end());
  WireReader r(MutableByteView(copy), false);
  RecordKey key;
  r.i16(key.version);
  if (key.version == 0 || key.version == 1) {
    key.kind = RecordKey::Kind::kOffsetCommit;
    r.str(key.offset.group);
    r.str(key.offset.topic);
    r.i32(key.offset.partition);
    key.group = key.offset.group;
  } else if (key.version == 2) {
    key.kind = RecordKey::Kind::kGroupMetadata;
    r.str(key.group);
  }
  if (!r.ok()) return MakeError(Errc::kCorrupt, "record key: " + r.error());
  return key;
}

Result<OffsetCommitValue> DecodeOffsetCommitValue(ByteView value) {
  return DecodeValue<OffsetCommitValue>(value, "OffsetCommitValue");
}

Result<GroupMetadataValue> DecodeGroupMetadataValue(ByteView value) {
  return DecodeValue<GroupMetadataValue>(value, "GroupMetadataValue");
}

}  // namespace strata::coordinator
