#pragma once
// ConsumerGroupDescribe (key 69, versions 0-1, flexible): KIP-848's
// DescribeGroups for consumer groups, with each member's current and target
// assignment. Version 1 (KIP-1099) adds whether a member speaks the classic
// or the consumer protocol.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct ConsumerGroupDescribeRequest {
  static constexpr int16_t kApiKey = 69;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 1;
  static constexpr int16_t kFirstFlexible = 0;

  std::vector<std::string> group_ids;
  bool include_authorized_operations = false;

  template <class IO>
  void Serde(IO& io, int16_t) {
    io.array(group_ids);
    io.boolean(include_authorized_operations);
    io.tagged_fields();
  }
  bool operator==(const ConsumerGroupDescribeRequest&) const = default;
};

struct ConsumerGroupDescribeResponse {
  struct TopicPartitions {
    Uuid topic_id{};
    std::string topic_name;
    std::vector<int32_t> partitions;

    template <class IO>
    void Serde(IO& io, int16_t) {
      io.uuid(topic_id);
      io.str(topic_name);
      io.array(partitions);
      io.tagged_fields();
    }
    bool operator==(const TopicPartitions&) const = default;
  };
  struct Assignment {
    std::vector<TopicPartitions> topic_partitions;

    template <class IO>
    void Serde(IO& io, int16_t version) {
      io.array(topic_partitions, [&](TopicPartitions& t) { t.Serde(io, version); });
      io.tagged_fields();
    }
    bool operator==(const Assignment&) const = default;
  };
  // KIP-1099's member types.
  static constexpr int8_t kUnknownMember = -1;
  static constexpr int8_t kClassicMember = 0;
  static constexpr int8_t kConsumerMember = 1;
  struct Member {
    std::string member_id;
    std::optional<std::string> instance_id;
    std::optional<std::string> rack_id;
    int32_t member_epoch = 0;
    std::string client_id;
    std::string client_host;
    std::vector<std::string> subscribed_topic_names;
    std::optional<std::string> subscribed_topic_regex;
    Assignment assignment;
    Assignment target_assignment;
    int8_t member_type = kUnknownMember;  // v1+

    template <class IO>
    void Serde(IO& io, int16_t version) {
      io.str(member_id);
      io.nullable_str(instance_id);
      io.nullable_str(rack_id);
      io.i32(member_epoch);
      io.str(client_id);
      io.str(client_host);
      io.array(subscribed_topic_names);
      io.nullable_str(subscribed_topic_regex);
      assignment.Serde(io, version);
      target_assignment.Serde(io, version);
      if (version >= 1) io.i8(member_type);
      io.tagged_fields();
    }
    bool operator==(const Member&) const = default;
  };
  struct Group {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    std::string group_id;
    std::string group_state;
    int32_t group_epoch = 0;
    int32_t assignment_epoch = 0;
    std::string assignor_name;
    std::vector<Member> members;
    int32_t authorized_operations = INT32_MIN;

    template <class IO>
    void Serde(IO& io, int16_t version) {
      io.i16(error_code);
      io.nullable_str(error_message);
      io.str(group_id);
      io.str(group_state);
      io.i32(group_epoch);
      io.i32(assignment_epoch);
      io.str(assignor_name);
      io.array(members, [&](Member& m) { m.Serde(io, version); });
      io.i32(authorized_operations);
      io.tagged_fields();
    }
    bool operator==(const Group&) const = default;
  };

  int32_t throttle_time_ms = 0;
  std::vector<Group> groups;

  template <class IO>
  void Serde(IO& io, int16_t version) {
    io.i32(throttle_time_ms);
    io.array(groups, [&](Group& g) { g.Serde(io, version); });
    io.tagged_fields();
  }
  bool operator==(const ConsumerGroupDescribeResponse&) const = default;
};

}  // namespace strata::protocol
