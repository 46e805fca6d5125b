#pragma once
// Test-only helpers for storage tests: builds valid v2 uncompressed record
// batches by hand (records encoded per the v2 format, CRC from
// protocol::ComputeBatchCrc), appends them, and manages a temp directory.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "protocol/record_batch.h"
#include "storage/log.h"

namespace strata::storage::testing {

struct BatchOptions {
  int records = 1;
  int64_t first_timestamp = 1000;
  int64_t timestamp_step = 1;  // record i carries first_timestamp + i * step
  size_t value_bytes = 16;
  uint8_t fill = 'v';
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  bool transactional = false;
};

inline void PutVarlong(Bytes& out, int64_t v) {
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  while (z >= 0x80) {
    out.push_back(static_cast<uint8_t>(z | 0x80));
    z >>= 7;
  }
  out.push_back(static_cast<uint8_t>(z));
}

// A batch with base offset 0 and partition leader epoch -1 (the log sets both).
inline Bytes MakeBatch(const BatchOptions& o) {
  Bytes records;
  int64_t max_ts = o.first_timestamp;
  for (int i = 0; i < o.records; ++i) {
    int64_t ts = o.first_timestamp + i * o.timestamp_step;
    max_ts = std::max(max_ts, ts);
    Bytes body;
    body.push_back(0);  // attributes
    PutVarlong(body, ts - o.first_timestamp);
    PutVarlong(body, i);   // offset delta
    PutVarlong(body, -1);  // null key
    PutVarlong(body, static_cast<int64_t>(o.value_bytes));
    body.insert(body.end(), o.value_bytes, static_cast<uint8_t>(o.fill + i % 7));
    PutVarlong(body, 0);  // no headers
    PutVarlong(records, static_cast<int64_t>(body.size()));
    records.insert(records.end(), body.begin(), body.end());
  }
  Bytes b(protocol::kBatchHeaderSize);
  b.insert(b.end(), records.begin(), records.end());
  uint8_t* p = b.data();
  StoreBE64(p, 0);
  StoreBE32(p + 8, static_cast<uint32_t>(b.size() - protocol::kLogOverhead));
  StoreBE32(p + 12, static_cast<uint32_t>(-1));
  p[16] = 2;
  StoreBE16(p + 21, o.transactional ? 0x10 : 0);
  StoreBE32(p + 23, static_cast<uint32_t>(o.records - 1));
  StoreBE64(p + 27, static_cast<uint64_t>(o.first_timestamp));
  StoreBE64(p + 35, static_cast<uint64_t>(max_ts));
  StoreBE64(p + 43, static_cast<uint64_t>(o.producer_id));
  StoreBE16(p + 51, static_cast<uint16_t>(o.producer_epoch));
  StoreBE32(p + 53, static_cast<uint32_t>(o.base_sequence));
  StoreBE32(p + 57, static_cast<uint32_t>(o.records));
  StoreBE32(p + protocol::kCrcOffset, protocol::ComputeBatchCrc(b));
  return b;
}

inline BatchInfo InfoFor(ByteView batch) {
  auto h = protocol::ParseBatchHeader(batch);
  EXPECT_TRUE(h.ok());
  BatchInfo info;
  info.size = h->size_in_bytes();
  info.record_count = h->last_offset_delta + 1;
  info.max_timestamp = h->max_timestamp;
  info.producer_id = h->producer_id;
  info.producer_epoch = h->producer_epoch;
  info.base_sequence = h->base_sequence;
  info.transactional = h->transactional();
  return info;
}

// Appends `batches` in one call (copied: the log rewrites them in place).
inline Result<AppendResult> AppendAll(Log& log, const std::vector<Bytes>& batches,
                                      int32_t leader_epoch = 0) {
  Bytes buf;
  std::vector<BatchInfo> infos;
  for (const Bytes& b : batches) {
    infos.push_back(InfoFor(b));
    buf.insert(buf.end(), b.begin(), b.end());
  }
  return log.Append(MutableByteView(buf), infos, LeaderEpoch(leader_epoch));
}

inline Result<AppendResult> AppendOne(Log& log, const BatchOptions& o, int32_t leader_epoch = 0) {
  return AppendAll(log, {MakeBatch(o)}, leader_epoch);
}

// The batch as the log stores it: base offset and leader epoch stamped.
inline Bytes Stamped(Bytes batch, Offset base_offset, int32_t leader_epoch) {
  protocol::SetBaseOffset(batch, base_offset);
  protocol::SetPartitionLeaderEpoch(batch, leader_epoch);
  return batch;
}

// Headers of every batch in a byte run.
inline std::vector<protocol::BatchHeader> Headers(ByteView data) {
  std::vector<protocol::BatchHeader> out;
  size_t pos = 0;
  while (pos < data.size()) {
    auto h = protocol::ParseBatchHeader(data.subspan(pos));
    EXPECT_TRUE(h.ok());
    if (!h.ok()) break;
    out.push_back(*h);
    pos += static_cast<size_t>(h->size_in_bytes());
  }
  return out;
}

// A fresh directory under the system temp dir, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "strata-storage-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    dir_ = root_ / "topic-0";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  std::filesystem::path File(int64_t offset, const char* suffix) const {
    char name[40];
    snprintf(name, sizeof(name), "%020lld%s", static_cast<long long>(offset), suffix);
    return dir_ / name;
  }

  std::filesystem::path root_;
  std::filesystem::path dir_;
};

}  // namespace strata::storage::testing
