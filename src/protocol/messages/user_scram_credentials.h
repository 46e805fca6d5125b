#pragma once
// DescribeUserScramCredentials (key 50) and AlterUserScramCredentials (key
// 51), version 0, flexible (KIP-554): list which SCRAM mechanisms and
// iteration counts users have, and add or remove their credentials. The
// client salts the password itself: only the salt and salted password cross
// the wire, and the broker keeps only keys derived from them.
// kafka-configs --entity-type users sends these.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "protocol/wire.h"

namespace strata::protocol {

struct DescribeUserScramCredentialsRequest {
  static constexpr int16_t kApiKey = 50;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 0;
  static constexpr int16_t kFirstFlexible = 0;

  struct UserName {
    std::string name;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.tagged_fields();
    }
    bool operator==(const UserName&) const = default;
  };
  // null or empty: every user.
  std::optional<std::vector<UserName>> users;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.nullable_array(users, [&](UserName& u) { u.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DescribeUserScramCredentialsRequest&) const = default;
};

struct DescribeUserScramCredentialsResponse {
  struct CredentialInfo {
    int8_t mechanism = 0;
    int32_t iterations = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.i8(mechanism);
      io.i32(iterations);
      io.tagged_fields();
    }
    bool operator==(const CredentialInfo&) const = default;
  };
  struct Result {
    std::string user;
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    std::vector<CredentialInfo> credential_infos;
    template <class IO>
    void Serde(IO& io, int16_t v) {
      io.str(user);
      io.i16(error_code);
      io.nullable_str(error_message);
      io.array(credential_infos, [&](CredentialInfo& c) { c.Serde(io, v); });
      io.tagged_fields();
    }
    bool operator==(const Result&) const = default;
  };

  int32_t throttle_time_ms = 0;
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  std::vector<Result> results;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.i16(error_code);
    io.nullable_str(error_message);
    io.array(results, [&](Result& r) { r.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const DescribeUserScramCredentialsResponse&) const = default;
};

struct AlterUserScramCredentialsRequest {
  static constexpr int16_t kApiKey = 51;
  static constexpr int16_t kMinVersion = 0;
  static constexpr int16_t kMaxVersion = 0;
  static constexpr int16_t kFirstFlexible = 0;

  struct Deletion {
    std::string name;
    int8_t mechanism = 0;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.i8(mechanism);
      io.tagged_fields();
    }
    bool operator==(const Deletion&) const = default;
  };
  struct Upsertion {
    std::string name;
    int8_t mechanism = 0;
    int32_t iterations = 0;
    Bytes salt;
    Bytes salted_password;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(name);
      io.i8(mechanism);
      io.i32(iterations);
      io.bytes(salt);
      io.bytes(salted_password);
      io.tagged_fields();
    }
    bool operator==(const Upsertion&) const = default;
  };

  std::vector<Deletion> deletions;
  std::vector<Upsertion> upsertions;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.array(deletions, [&](Deletion& d) { d.Serde(io, v); });
    io.array(upsertions, [&](Upsertion& u) { u.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const AlterUserScramCredentialsRequest&) const = default;
};

struct AlterUserScramCredentialsResponse {
  struct Result {
    std::string user;
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    template <class IO>
    void Serde(IO& io, int16_t) {
      io.str(user);
      io.i16(error_code);
      io.nullable_str(error_message);
      io.tagged_fields();
    }
    bool operator==(const Result&) const = default;
  };

  int32_t throttle_time_ms = 0;
  std::vector<Result> results;

  template <class IO>
  void Serde(IO& io, int16_t v) {
    io.i32(throttle_time_ms);
    io.array(results, [&](Result& r) { r.Serde(io, v); });
    io.tagged_fields();
  }
  bool operator==(const AlterUserScramCredentialsResponse&) const = default;
};

}  // namespace strata::protocol
