#pragma once
// Kafka wire primitives and the two "IO" visitors every message definition is
// written against. A message describes its fields once, in a template
//   template <class IO> void Serde(IO& io, int16_t version);
// and the same code decodes (WireReader) and encodes (WireWriter), so the two
// directions cannot drift. Flexible versions (KIP-482) switch strings, bytes
// and arrays to compact (unsigned-varint length + 1) forms and add a tagged
// field section after every struct; the IO knows which form is in use.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/file_region.h"

namespace strata::protocol {

using Uuid = std::array<uint8_t, 16>;

// A records field (Produce request, Fetch response). On decode `view` points
// into the request buffer (which outlives the decoded request and may be
// rewritten in place); on encode `view` is written, followed by `regions` in
// order (log bytes still in their segment file, remote chunks in their cache
// file or buffer; see WireWriter). `null` = length -1.
struct RecordsField {
  MutableByteView view;
  Bytes owned;                      // optional backing storage for `view`
  std::vector<FileRegion> regions;  // encode only
  bool null = false;
  void Own(Bytes b) {
    owned = std::move(b);
    view = MutableByteView(owned.data(), owned.size());
    null = false;
  }
  void Send(FileRegion r) {
    if (r.length > 0) regions.push_back(std::move(r));
    null = false;
  }
  size_t size() const {
    size_t n = view.size();
    for (const FileRegion& r : regions) n += r.length;
    return n;
  }
};

// Unknown tagged fields are skipped on decode; a message names the tagged
// fields it knows with tagged_fields(tag, field, each).

// Decoder. Errors are sticky: after the first failure every read returns a
// zero value and ok() is false, so message code needs no checks per field.
class WireReader {
 public:
  static constexpr bool kDecoding = true;
  WireReader(MutableByteView data, bool flexible)
      : data_(data), flexible_(flexible), alloc_budget_(data.size() * kBudgetPerInputByte + 4096) {}

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  bool flexible() const { return flexible_; }
  void set_flexible(bool f) { flexible_ = f; }
  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

  void i8(int8_t& v);
  void i16(int16_t& v);
  void i32(int32_t& v);
  void i64(int64_t& v);
  void u16(uint16_t& v);
  void u32(uint32_t& v);
  void boolean(bool& v);
  void f64(double& v);
  void uuid(Uuid& v);
  void uvarint(uint32_t& v);
  void varint(int32_t& v);
  void varlong(int64_t& v);

  void str(std::string& v);
  void nullable_str(std::optional<std::string>& v);
  void bytes(Bytes& v);
  void nullable_bytes(std::optional<Bytes>& v);
  void records(RecordsField& v);
  // Always int16-length, even in flexible versions (request header client_id).
  void legacy_nullable_str(std::optional<std::string>& v);

  template <typename T, typename F>
  void array(std::vector<T>& v, F&& each) {
    int32_t n = array_length();
    if (n < 0) {
      if (ok()) fail("non-nullable array is null");
      return;
    }
    fill(v, n, each);
  }
  template <typename T, typename F>
  void nullable_array(std::optional<std::vector<T>>& v, F&& each) {
    int32_t n = array_length();
    if (n < 0) {
      v.reset();
      return;
    }
    v.emplace();
    fill(*v, n, each);
  }
  // Arrays of primitives.
  void array(std::vector<int32_t>& v) {
    array(v, [this](int32_t& e) { i32(e); });
  }
  void array(std::vector<int64_t>& v) {
    array(v, [this](int64_t& e) { i64(e); });
  }
  void array(std::vector<std::string>& v) {
    array(v, [this](std::string& e) { str(e); });
  }

  // The tagged-field section; a no-op in non-flexible versions.
  void tagged_fields();
  // A tagged-field section with one known field: `tag` is decoded into
  // `field` by each(io, value); other tags are skipped.
  template <typename T, typename F>
  void tagged_fields(uint32_t tag, std::optional<T>& field, F&& each) {
    if (!flexible_) return;
    uint32_t count = 0;
    uvarint(count);
    for (uint32_t i = 0; i < count && ok(); ++i) {
      uint32_t t = 0, size = 0;
      uvarint(t);
      uvarint(size);
      if (!need(size)) return;
      if (t != tag) {
        pos_ += size;
        continue;
      }
      const size_t end = pos_ + size;
      field = T{};  // not emplace(): clang 14 rejects it for a nested struct
      each(*this, *field);
      if (ok() && pos_ != end) fail("tagged field " + std::to_string(tag) + " has the wrong size");
    }
  }
  // The same with two known fields.
  template <typename T1, typename F1, typename T2, typename F2>
  void tagged_fields(uint32_t tag1, std::optional<T1>& field1, F1&& each1, uint32_t tag2,
                     std::optional<T2>& field2, F2&& each2) {
    if (!flexible_) return;
    uint32_t count = 0;
    uvarint(count);
    for (uint32_t i = 0; i < count && ok(); ++i) {
      uint32_t t = 0, size = 0;
      uvarint(t);
      uvarint(size);
      if (!need(size)) return;
      const size_t end = pos_ + size;
      if (t == tag1) {
        field1 = T1{};
        each1(*this, *field1);
      } else if (t == tag2) {
        field2 = T2{};
        each2(*this, *field2);
      } else {
        pos_ += size;
        continue;
      }
      if (ok() && pos_ != end) fail("tagged field " + std::to_string(t) + " has the wrong size");
    }
  }
  // The same with three known fields.
  template <typename T1, typename F1, typename T2, typename F2, typename T3, typename F3>
  void tagged_fields(uint32_t tag1, std::optional<T1>& field1, F1&& each1, uint32_t tag2,
                     std::optional<T2>& field2, F2&& each2, uint32_t tag3,
                     std::optional<T3>& field3, F3&& each3) {
    if (!flexible_) return;
    uint32_t count = 0;
    uvarint(count);
    for (uint32_t i = 0; i < count && ok(); ++i) {
      uint32_t t = 0, size = 0;
      uvarint(t);
      uvarint(size);
      if (!need(size)) return;
      const size_t end = pos_ + size;
      if (t == tag1) {
        field1 = T1{};
        each1(*this, *field1);
      } else if (t == tag2) {
        field2 = T2{};
        each2(*this, *field2);
      } else if (t == tag3) {
        field3 = T3{};
        each3(*this, *field3);
      } else {
        pos_ += size;
        continue;
      }
      if (ok() && pos_ != end) fail("tagged field " + std::to_string(t) + " has the wrong size");
    }
  }

  void fail(std::string message);

 private:
  bool need(size_t n);
  int32_t array_length();
  int32_t length(bool compact_nullable_allowed);
  template <typename T, typename F>
  void fill(std::vector<T>& v, int32_t n, F&& each) {
    // Every element takes at least one byte: bounds allocation by input size.
    if (static_cast<size_t>(n) > remaining()) {
      fail("array length beyond request size");
      return;
    }
    // A 1-byte wire element may still cost sizeof(T) in memory (32 bytes for
    // a string): a budget proportional to the input bounds the total.
    size_t cost = static_cast<size_t>(n) * sizeof(T);
    if (cost > alloc_budget_) {
      fail("decoded request would need too much memory");
      return;
    }
    alloc_budget_ -= cost;
    v.clear();
    v.resize(n);
    for (auto& e : v) {
      each(e);
      if (!ok()) return;
    }
  }

  // Decoded containers may use at most this many bytes per input byte.
  static constexpr size_t kBudgetPerInputByte = 24;

  MutableByteView data_;
  size_t pos_ = 0;
  bool flexible_;
  size_t alloc_budget_;
  std::string error_;
};

// Encoder appending to a byte buffer.
class WireWriter {
 public:
  static constexpr bool kDecoding = false;
  // With `splices`, records regions are not copied: each becomes a splice
  // at its place in `out` for the sender to sendfile(2). Without, they are
  // read into `out` (pread).
  WireWriter(Bytes& out, bool flexible, FileSplices* splices = nullptr)
      : out_(out), flexible_(flexible), splices_(splices) {}

  bool ok() const { return true; }
  bool flexible() const { return flexible_; }
  void set_flexible(bool f) { flexible_ = f; }

  void i8(const int8_t& v) { put(uint8_t(v)); }
  void i16(const int16_t& v);
  void i32(const int32_t& v);
  void i64(const int64_t& v);
  void u16(const uint16_t& v) { i16(int16_t(v)); }
  void u32(const uint32_t& v) { i32(int32_t(v)); }
  void boolean(const bool& v) { put(v ? 1 : 0); }
  void f64(const double& v);
  void uuid(const Uuid& v) { out_.insert(out_.end(), v.begin(), v.end()); }
  void uvarint(const uint32_t& v);
  void varint(const int32_t& v);
  void varlong(const int64_t& v);

  void str(const std::string& v);
  void nullable_str(const std::optional<std::string>& v);
  void bytes(const Bytes& v);
  void nullable_bytes(const std::optional<Bytes>& v);
  void records(const RecordsField& v);
  void legacy_nullable_str(const std::optional<std::string>& v);

  template <typename T, typename F>
  void array(std::vector<T>& v, F&& each) {
    length(static_cast<int32_t>(v.size()));
    for (auto& e : v) each(e);
  }
  template <typename T, typename F>
  void nullable_array(std::optional<std::vector<T>>& v, F&& each) {
    if (!v) {
      length(-1);
      return;
    }
    array(*v, each);
  }
  void array(std::vector<int32_t>& v) {
    array(v, [this](int32_t& e) { i32(e); });
  }
  void array(std::vector<int64_t>& v) {
    array(v, [this](int64_t& e) { i64(e); });
  }
  void array(std::vector<std::string>& v) {
    array(v, [this](std::string& e) { str(e); });
  }

  void tagged_fields() {
    if (flexible_) put(0);
  }
  // A tagged-field section holding `field` as `tag` when it is set.
  template <typename T, typename F>
  void tagged_fields(uint32_t tag, std::optional<T>& field, F&& each) {
    if (!flexible_) return;
    if (!field) {
      put(0);
      return;
    }
    uvarint(1);
    put_tagged(tag, *field, each);
  }
  // The same with two fields, in tag order (tag1 < tag2).
  template <typename T1, typename F1, typename T2, typename F2>
  void tagged_fields(uint32_t tag1, std::optional<T1>& field1, F1&& each1, uint32_t tag2,
                     std::optional<T2>& field2, F2&& each2) {
    if (!flexible_) return;
    uvarint((field1 ? 1u : 0u) + (field2 ? 1u : 0u));
    if (field1) put_tagged(tag1, *field1, each1);
    if (field2) put_tagged(tag2, *field2, each2);
  }
  // The same with three fields, in tag order.
  template <typename T1, typename F1, typename T2, typename F2, typename T3, typename F3>
  void tagged_fields(uint32_t tag1, std::optional<T1>& field1, F1&& each1, uint32_t tag2,
                     std::optional<T2>& field2, F2&& each2, uint32_t tag3,
                     std::optional<T3>& field3, F3&& each3) {
    if (!flexible_) return;
    uvarint((field1 ? 1u : 0u) + (field2 ? 1u : 0u) + (field3 ? 1u : 0u));
    if (field1) put_tagged(tag1, *field1, each1);
    if (field2) put_tagged(tag2, *field2, each2);
    if (field3) put_tagged(tag3, *field3, each3);
  }
  void fail(const std::string&) {}

  // Length prefix: int32/int16 in classic versions, uvarint(n+1) when flexible.
  void length(int32_t n);

 private:
  void put(uint8_t b) { out_.push_back(b); }
  template <typename T, typename F>
  void put_tagged(uint32_t tag, T& value, F& each) {
    Bytes body;
    WireWriter sub(body, true);
    each(sub, value);
    uvarint(tag);
    uvarint(static_cast<uint32_t>(body.size()));
    out_.insert(out_.end(), body.begin(), body.end());
  }
  Bytes& out_;
  bool flexible_;
  FileSplices* splices_;
};

// Unsigned varint helpers for record parsing and tests.
size_t PutUvarint(Bytes& out, uint32_t v);

}  // namespace strata::protocol
