#include "protocol/wire.h"

#include <fmt/format.h>
#include <unistd.h>

#include <bit>
#include <cstring>

namespace strata::protocol {

// ---------------------------------------------------------------- reader

void WireReader::fail(std::string message) {
  if (error_.empty()) error_ = fmt::format("{} (at byte {})", message, pos_);
  pos_ = data_.size();
}

bool WireReader::need(size_t n) {
  if (!ok()) return false;
  if (remaining() < n) {
    fail(fmt::format("truncated: need {} bytes, have {}", n, remaining()));
    return false;
  }
  return true;
}

void WireReader::i8(int8_t& v) {
  v = 0;
  if (need(1)) v = static_cast<int8_t>(data_[pos_++]);
}
void WireReader::i16(int16_t& v) {
  v = 0;
  if (need(2)) {
    v = static_cast<int16_t>(LoadBE16(&data_[pos_]));
    pos_ += 2;
  }
}
void WireReader::i32(int32_t& v) {
  v = 0;
  if (need(4)) {
    v = static_cast<int32_t>(LoadBE32(&data_[pos_]));
    pos_ += 4;
  }
}
void WireReader::i64(int64_t& v) {
  v = 0;
  if (need(8)) {
    v = static_cast<int64_t>(LoadBE64(&data_[pos_]));
    pos_ += 8;
  }
}
void WireReader::u16(uint16_t& v) {
  int16_t s;
  i16(s);
  v = static_cast<uint16_t>(s);
}
void WireReader::u32(uint32_t& v) {
  int32_t s;
  i32(s);
  v = static_cast<uint32_t>(s);
}
void WireReader::boolean(bool& v) {
  int8_t b;
  i8(b);
  v = b != 0;
}
void WireReader::f64(double& v) {
  int64_t bits;
  i64(bits);
  v = std::bit_cast<double>(bits);
}
void WireReader::uuid(Uuid& v) {
  v = {};
  if (need(16)) {
    std::memcpy(v.data(), &data_[pos_], 16);
    pos_ += 16;
  }
}
void WireReader::uvarint(uint32_t& v) {
  v = 0;
  for (int shift = 0; shift <= 28; shift += 7) {
    if (!need(1)) return;
    uint8_t b = data_[pos_++];
    v |= uint32_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return;
  }
  fail("uvarint too long");
}
void WireReader::varint(int32_t& v) {
  uint32_t u;
  uvarint(u);
  v = static_cast<int32_t>((u >> 1) ^ -(u & 1));
}
void WireReader::varlong(int64_t& v) {
  uint64_t u = 0;
  v = 0;
  for (int shift = 0; shift <= 63; shift += 7) {
    if (!need(1)) return;
    uint8_t b = data_[pos_++];
    u |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      v = static_cast<int64_t>((u >> 1) ^ -(u & 1));
      return;
    }
  }
  fail("varlong too long");
}

int32_t WireReader::length(bool nullable) {
  if (flexible_) {
    uint32_t n;
    uvarint(n);
    if (!ok()) return -1;
    if (n == 0) {
      if (!nullable) fail("null where not nullable");
      return -1;
    }
    if (n - 1 > INT32_MAX) {
      fail("length too large");
      return -1;
    }
    return static_cast<int32_t>(n - 1);
  }
  return 0;  // unused
}

int32_t WireReader::array_length() {
  if (flexible_) return length(true);
  int32_t n;
  i32(n);
  if (!ok()) return -1;
  if (n < -1) fail(fmt::format("negative array length {}", n));
  return n;
}

void WireReader::str(std::string& v) {
  std::optional<std::string> s;
  nullable_str(s);
  if (ok() && !s) fail("null string where not nullable");
  v = s ? std::move(*s) : std::string();
}

void WireReader::nullable_str(std::optional<std::string>& v) {
  v.reset();
  int32_t n;
  if (flexible_) {
    n = length(true);
  } else {
    int16_t s;
    i16(s);
    n = s;
    if (n < -1) fail(fmt::format("negative string length {}", n));
  }
  if (!ok() || n < 0) return;
  if (!need(static_cast<size_t>(n))) return;
  v.emplace(reinterpret_cast<const char*>(&data_[pos_]), static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
}

void WireReader::legacy_nullable_str(std::optional<std::string>& v) {
  bool f = flexible_;
  flexible_ = false;
  nullable_str(v);
  flexible_ = f;
}

void WireReader::nullable_bytes(std::optional<Bytes>& v) {
  RecordsField r;
  records(r);
  if (!ok() || r.null) {
    v.reset();
    return;
  }
  v.emplace(r.view.begin(), r.view.end());
}

void WireReader::bytes(Bytes& v) {
  std::optional<Bytes> b;
  nullable_bytes(b);
  if (ok() && !b) fail("null bytes where not nullable");
  v = b ? std::move(*b) : Bytes();
}

void WireReader::records(RecordsField& v) {
  v = RecordsField{};
  int32_t n;
  if (flexible_) {
    n = length(true);
  } else {
    i32(n);
    if (n < -1) fail(fmt::format("negative bytes length {}", n));
  }
  if (!ok()) return;
  if (n < 0) {
    v.null = true;
    return;
  }
  if (!need(static_cast<size_t>(n))) return;
  v.view = data_.subspan(pos_, static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
}

void WireReader::tagged_fields() {
  if (!flexible_) return;
  uint32_t count;
  uvarint(count);
  for (uint32_t i = 0; i < count && ok(); ++i) {
    uint32_t tag, size;
    uvarint(tag);
    uvarint(size);
    if (need(size)) pos_ += size;
  }
}

// ---------------------------------------------------------------- writer

void WireWriter::i16(const int16_t& v) {
  uint8_t b[2];
  StoreBE16(b, static_cast<uint16_t>(v));
  out_.insert(out_.end(), b, b + 2);
}
void WireWriter::i32(const int32_t& v) {
  uint8_t b[4];
  StoreBE32(b, static_cast<uint32_t>(v));
  out_.insert(out_.end(), b, b + 4);
}
void WireWriter::i64(const int64_t& v) {
  uint8_t b[8];
  StoreBE64(b, static_cast<uint64_t>(v));
  out_.insert(out_.end(), b, b + 8);
}
void WireWriter::f64(const double& v) { i64(std::bit_cast<int64_t>(v)); }
void WireWriter::uvarint(const uint32_t& v) { PutUvarint(out_, v); }
void WireWriter::varint(const int32_t& v) {
  uint32_t u = (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
  PutUvarint(out_, u);
}
void WireWriter::varlong(const int64_t& v) {
  uint64_t u = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  while (u >= 0x80) {
    put(static_cast<uint8_t>(u | 0x80));
    u >>= 7;
  }
  put(static_cast<uint8_t>(u));
}

void WireWriter::length(int32_t n) {
  if (flexible_) {
    PutUvarint(out_, static_cast<uint32_t>(n + 1));
  } else {
    i32(n);
  }
}

void WireWriter::nullable_str(const std::optional<std::string>& v) {
  int32_t n = v ? static_cast<int32_t>(v->size()) : -1;
  if (flexible_) {
    PutUvarint(out_, static_cast<uint32_t>(n + 1));
  } else {
    i16(static_cast<int16_t>(n));
  }
  if (v) out_.insert(out_.end(), v->begin(), v->end());
}
void WireWriter::str(const std::string& v) {
  if (flexible_) {
    PutUvarint(out_, static_cast<uint32_t>(v.size() + 1));
  } else {
    i16(static_cast<int16_t>(v.size()));
  }
  out_.insert(out_.end(), v.begin(), v.end());
}
void WireWriter::legacy_nullable_str(const std::optional<std::string>& v) {
  bool f = flexible_;
  flexible_ = false;
  nullable_str(v);
  flexible_ = f;
}
void WireWriter::bytes(const Bytes& v) {
  length(static_cast<int32_t>(v.size()));
  out_.insert(out_.end(), v.begin(), v.end());
}
void WireWriter::nullable_bytes(const std::optional<Bytes>& v) {
  if (!v) {
    length(-1);
    return;
  }
  bytes(*v);
}
void WireWriter::records(const RecordsField& v) {
  if (v.null) {
    length(-1);
    return;
  }
  length(static_cast<int32_t>(v.size()));
  out_.insert(out_.end(), v.view.begin(), v.view.end());
  for (const FileRegion& region : v.regions) {
    if (splices_ != nullptr) {
      splices_->push_back(FileSplice{out_.size(), region});
      continue;
    }
    // No sender to splice for: copy. A short read (the file shrank, which
    // log data below the high watermark never does) leaves zeros, which the
    // client rejects by CRC.
    size_t at = out_.size();
    out_.resize(at + region.length);
    (void)CopyRegionBytes(region, 0, region.length, out_.data() + at);
  }
}

size_t PutUvarint(Bytes& out, uint32_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
    ++n;
  }
  out.push_back(static_cast<uint8_t>(v));
  return n + 1;
}

}  // namespace strata::protocol
