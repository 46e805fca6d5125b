// The decoder's memory budget: a request whose elements are tiny on the wire
// but large in memory is refused instead of allocating without bound.
#include <gtest/gtest.h>

#include "protocol/message.h"
#include "protocol/messages/metadata.h"
#include "protocol/wire.h"

namespace strata::protocol {
namespace {

Bytes MetadataV9WithEmptyNames(uint32_t count, size_t name_length) {
  Bytes out;
  PutUvarint(out, count + 1);  // compact array
  for (uint32_t i = 0; i < count; ++i) {
    PutUvarint(out, static_cast<uint32_t>(name_length + 1));
    out.insert(out.end(), name_length, 'a');
    out.push_back(0);  // tagged fields
  }
  out.push_back(1);  // allow_auto_topic_creation
  out.push_back(0);  // include_cluster_authorized_operations (v8-10)
  out.push_back(0);  // include_topic_authorized_operations
  out.push_back(0);  // tagged fields
  return out;
}

TEST(WireBudgetTest, HostileElementCountIsRefused) {
  Bytes body = MetadataV9WithEmptyNames(500000, 0);  // 1 MB on the wire, ~28 MB decoded
  auto r = Decode<MetadataRequest>(MutableByteView(body), 9, true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("too much memory"), std::string::npos);
}

TEST(WireBudgetTest, RealisticRequestsFit) {
  Bytes body = MetadataV9WithEmptyNames(20000, 12);  // topic names of a realistic length
  auto r = Decode<MetadataRequest>(MutableByteView(body), 9, true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->topics->size(), 20000u);
}

}  // namespace
}  // namespace strata::protocol
