// Tests for the authentication APIs' definitions in protocol/messages/
// (SaslHandshake, SaslAuthenticate, DescribeUserScramCredentials,
// AlterUserScramCredentials): round trips at every version and bytes built
// by hand from Kafka's message definitions.
#include <gtest/gtest.h>

#include "protocol/message.h"
#include "protocol/security_messages_fill.h"

namespace strata::protocol {
namespace {

template <class M>
M RoundTrip(M& m, int16_t v, bool flexible) {
  Bytes wire;
  Encode(m, v, flexible, wire);
  Bytes copy = wire;
  M d;
  WireReader r(MutableByteView(wire.data(), wire.size()), flexible);
  d.Serde(r, v);
  EXPECT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.remaining(), 0u);
  Bytes again;
  Encode(d, v, flexible, again);
  EXPECT_EQ(again, copy);
  return d;
}

template <class Req, class Resp>
void RoundTripAllVersions() {
  for (int16_t v = Req::kMinVersion; v <= Req::kMaxVersion; ++v) {
    const bool flex = IsFlexible<Req>(v);
    for (bool nulls : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "api " << Req::kApiKey << " v" << v << nulls);
      Req req;
      Fill(req, v, nulls);
      EXPECT_TRUE(RoundTrip(req, v, flex) == req);
      Resp resp;
      Fill(resp, v, nulls);
      EXPECT_TRUE(RoundTrip(resp, v, flex) == resp);
    }
  }
}

TEST(SecurityMessagesRoundTrip, EveryVersion) {
  RoundTripAllVersions<SaslHandshakeRequest, SaslHandshakeResponse>();
  RoundTripAllVersions<SaslAuthenticateRequest, SaslAuthenticateResponse>();
  RoundTripAllVersions<DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse>();
  RoundTripAllVersions<AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse>();
  RoundTripAllVersions<DescribeAclsRequest, DescribeAclsResponse>();
  RoundTripAllVersions<CreateAclsRequest, CreateAclsResponse>();
  RoundTripAllVersions<DeleteAclsRequest, DeleteAclsResponse>();
  RoundTripAllVersions<DescribeClientQuotasRequest, DescribeClientQuotasResponse>();
  RoundTripAllVersions<AlterClientQuotasRequest, AlterClientQuotasResponse>();
}

TEST(SecurityMessagesGolden, CreateAclsRequestV1) {
  CreateAclsRequest m;
  m.creations = {{2, "t", 3, "User:a", "*", 4, 3}};
  Bytes wire;
  Encode(m, 1, false, wire);
  EXPECT_EQ(wire, (Bytes{0,   0,   0,   1,   2,   0,   1, 't', 3,   0, 6,
                         'U', 's', 'e', 'r', ':', 'a', 0, 1,   '*', 4, 3}));
}

TEST(SecurityMessagesGolden, SaslAuthenticateResponseV1AndV2) {
  SaslAuthenticateResponse m;
  m.error_code = 0;
  m.auth_bytes = {0xAB};
  m.session_lifetime_ms = 1000;
  Bytes v1;
  Encode(m, 1, false, v1);
  // error 0, null message (-1), bytes len 1 + AB, lifetime 1000.
  EXPECT_EQ(v1, (Bytes{0, 0, 0xFF, 0xFF, 0, 0, 0, 1, 0xAB, 0, 0, 0, 0, 0, 0, 0x03, 0xE8}));
  Bytes v2;
  Encode(m, 2, true, v2);
  // Compact: null string 0, bytes length+1 = 2, then the lifetime and no tags.
  EXPECT_EQ(v2, (Bytes{0, 0, 0, 2, 0xAB, 0, 0, 0, 0, 0, 0, 0x03, 0xE8, 0}));
  Bytes v0;
  Encode(m, 0, false, v0);  // no lifetime before v1
  EXPECT_EQ(v0, (Bytes{0, 0, 0xFF, 0xFF, 0, 0, 0, 1, 0xAB}));
}

TEST(SecurityMessagesGolden, AlterUserScramCredentialsRequestV0) {
  AlterUserScramCredentialsRequest m;
  m.upsertions = {{"u", 1, 4096, {7}, {8, 9}}};
  Bytes wire;
  Encode(m, 0, true, wire);
  // deletions: empty compact array (1); upsertions: 1 entry (2): name "u" (2 'u'),
  // mechanism 1, iterations 4096, salt (2 07), salted password (3 08 09), no tags;
  // then the request's tags.
  EXPECT_EQ(wire, (Bytes{1, 2, 2, 'u', 1, 0, 0, 0x10, 0, 2, 7, 3, 8, 9, 0, 0}));
}

}  // namespace
}  // namespace strata::protocol
