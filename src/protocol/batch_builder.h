#pragma once
// BatchBuilder: assembles one valid v2 record batch (lengths, compressed
// records section, CRC) from records given as plain values: the
// end-transaction markers a leader writes (control_record.h), and batches for
// tests, benchmarks and fuzz corpora; a few knobs also allow building batches
// that are deliberately invalid. Not thread-safe.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/bytes.h"
#include "protocol/record_batch.h"

namespace strata::protocol {

class BatchBuilder {
 public:
  struct Header {
    std::string key;
    std::optional<Bytes> value;
  };
  struct Entry {
    std::optional<Bytes> key;
    std::optional<Bytes> value;
    std::vector<Header> headers;
    int64_t timestamp = 0;
    // Normally the record's index; set only to build an invalid batch.
    std::optional<int32_t> offset_delta;
  };

  BatchBuilder& set_compression(Compression c) {
    compression_ = c;
    return *this;
  }
  BatchBuilder& set_base_offset(int64_t offset) {
    base_offset_ = offset;
    return *this;
  }
  BatchBuilder& set_partition_leader_epoch(int32_t epoch) {
    partition_leader_epoch_ = epoch;
    return *this;
  }
  BatchBuilder& set_producer(int64_t id, int16_t epoch, int32_t base_sequence) {
    producer_id_ = id;
    producer_epoch_ = epoch;
    base_sequence_ = base_sequence;
    return *this;
  }
  BatchBuilder& set_transactional(bool on) {
    transactional_ = on;
    return *this;
  }
  BatchBuilder& set_control(bool on) {
    control_ = on;
    return *this;
  }

  BatchBuilder& Add(Entry entry) {
    entries_.push_back(std::move(entry));
    return *this;
  }
  // Convenience for text keys/values without headers.
  BatchBuilder& Add(std::optional<std::string_view> key, std::optional<std::string_view> value,
                    int64_t timestamp = 0);

  size_t record_count() const { return entries_.size(); }

  // The whole batch, log overhead included. baseTimestamp is the first
  // record's timestamp, maxTimestamp the largest (-1 for both when empty).
  Bytes Build() const;

 private:
  Bytes EncodeRecords(int64_t base_timestamp) const;

  Compression compression_ = Compression::kNone;
  int64_t base_offset_ = 0;
  int32_t partition_leader_epoch_ = -1;
  int64_t producer_id_ = -1;
  int16_t producer_epoch_ = -1;
  int32_t base_sequence_ = -1;
  bool transactional_ = false;
  bool control_ = false;
  std::vector<Entry> entries_;
};

}  // namespace strata::protocol
