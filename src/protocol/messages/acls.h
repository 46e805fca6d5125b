#pragma once
// DescribeAcls (key 29), CreateAcls (30) and DeleteAcls (31), versions 1-3
// (flexible from 2; version 0, without pattern types, is gone since Kafka 4):
// what kafka-acls --list / --add / --remove send. Resource types, pattern
// types, operations and permissions are Kafka's int8 codes
// (security/acl.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire.h"

namespace strata::protocol {

// An ACL binding filter: what DescribeAcls asks for, and each of DeleteAcls'
// filters.
struct AclFilterData {
  int8_t resource_type_filter = 0;
  std::optional<std::string> resource_name_filter;
  int8_t pattern_type_filter = 3;
  std::optional<std::string> principal_filter;
  std::optional<std::string> host_filter;
  int8_t operation = 0;
  int8_t permission_type = 0;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i8(resource_type_filter);
    io.nullable_str(resource_name_filter);
    io.i8(pattern_type_filter);
    io.nullable_str(principal_filter);
    io.nullable_str(host_filter);
    io.i8(operation);
    io.i8(permission_type);
    if (v >= 2) io.tagged_fields();
  }
  bool operator==(const AclFilterData&) const = default;
};

struct DescribeAclsRequest : AclFilterData {
  static constexpr int16_t kApiKey = 29;
  static constexpr int16_t kMinVersion = 1;
  static constexpr int16_t kMaxVersion = 3;
  static constexpr int16_t kFirstFlexible = 2;
  bool operator==(const DescribeAclsRequest&) const = default;
};

// One ACL entry of a resource in DescribeAcls.
struct AclDescription {
  std::string principal;
  std::string host;
  int8_t operation = 0;
  int8_t permission_type = 0;
  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.str(principal);
    io.str(host);
    io.i8(operation);
    io.i8(permission_type);
    if (v >= 2) io.tagged_fields();
  }
  bool operator==(const AclDescription&) const = default;
};

struct DescribeAclsResponse {
  struct Resource {
    int8_t resource_type = 0;
    std::string resource_name;
    int8_t pattern_type = 3;
    std::vector<AclDescription> acls;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i8(resource_type);
      io.str(resource_name);
      io.i8(pattern_type);
      io.array(acls, [&](AclDescription& a) { a.Serde(io, v); });
      if (v >= 2) io.tagged_fields();
    }
    bool operator==(const Resource&) const = default;
  };

  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::vector<Resource> resources;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    io.nullable_str(error_message);
    io.array(resources, [&](Resource& r) { r.Serde(io, v); });
    if (v >= 2) io.tagged_fields();
  }
  bool operator==(const DescribeAclsResponse&) const = default;
};

struct CreateAclsRequest {
  static constexpr int16_t kApiKey = 30;
  static constexpr int16_t kMinVersion = 1;
  static constexpr int16_t kMaxVersion = 3;
  static constexpr int16_t kFirstFlexible = 2;

  struct Creation {
    int8_t resource_type = 0;
    std::string resource_name;
    int8_t resource_pattern_type = 3;
    std::string principal;
    std::string host;
    int8_t operation = 0;
    int8_t permission_type = 0;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i8(resource_type);
      io.str(resource_name);
      io.i8(resource_pattern_type);
      io.str(principal);
      io.str(host);
      io.i8(operation);
      io.i8(permission_type);
      if (v >= 2) io.tagged_fields();
    }
    bool operator==(const Creation&) const = default;
  };

  std::vector<Creation> creations;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(creations, [&](Creation& c) { c.Serde(io, v); });
    if (v >= 2) io.tagged_fields();
  }
  bool operator==(const CreateAclsRequest&) const = default;
};

struct CreateAclsResponse {
  struct Result {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i16(error_code);
      io.nullable_str(error_message);
      if (v >= 2) io.tagged_fields();
    }
    bool operator==(const Result&) const = default;
  };

  int32_t throttle_time_ms = 0;
  std::vector<Result> results;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(results, [&](Result& r) { r.Serde(io, v); });
    if (v >= 2) io.tagged_fields();
  }
  bool operator==(const CreateAclsResponse&) const = default;
};

struct DeleteAclsRequest {
  static constexpr int16_t kApiKey = 31;
  static constexpr int16_t kMinVersion = 1;
  static constexpr int16_t kMaxVersion = 3;
  static constexpr int16_t kFirstFlexible = 2;

  using Filter = AclFilterData;

  std::vector<Filter> filters;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(filters, [&](Filter& f) { f.Serde(io, v); });
    if (v >= 2) io.tagged_fields();
  }
  bool operator==(const DeleteAclsRequest&) const = default;
};

struct DeleteAclsResponse {
  struct MatchingAcl {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    int8_t resource_type = 0;
    std::string resource_name;
    int8_t pattern_type = 3;
    std::string principal;
    std::string host;
    int8_t operation = 0;
    int8_t permission_type = 0;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i16(error_code);
      io.nullable_str(error_message);
      io.i8(resource_type);
      io.str(resource_name);
      io.i8(pattern_type);
      io.str(principal);
      io.str(host);
      io.i8(operation);
      io.i8(permission_type);
      if (v >= 2) io.tagged_fields();
    }
    bool operator==(const MatchingAcl&) const = default;
  };
  struct FilterResult {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    std::vector<MatchingAcl> matching_acls;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.i16(error_code);
      io.nullable_str(error_message);
      io.array(matching_acls, [&](MatchingAcl& m) { m.Serde(io, v); });
      if (v >= 2) io.tagged_fields();
    }
    bool operator==(const FilterResult&) const = default;
  };

  int32_t throttle_time_ms = 0;
  std::vector<FilterResult> filter_results;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(filter_results, [&](FilterResult& f) { f.Serde(io, v); });
    if (v >= 2) io.tagged_fields();
  }
  bool operator==(const DeleteAclsResponse&) const = default;
};

}  // namespace strata::protocol
