#pragma once
// RemoteRange: bytes [begin, end) of a remote object as regions in order:
// chunks of the chunk cache in their files, chunks just fetched in their own
// buffers. A remote read reaches the Fetch response as these regions, so its
// bytes are not copied again on the way (cached chunks go out with
// sendfile(2)); Gather() assembles them for callers that want one buffer.
#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "base/file_region.h"
#include "base/result.h"

namespace strata::tiered {

class RemoteRange {
 public:
  RemoteRange() = default;
  explicit RemoteRange(uint64_t begin) : begin_(begin), end_(begin) {}
  // One region owning `bytes`, which sit at `begin` in the object.
  static RemoteRange OfBytes(uint64_t begin, Bytes bytes);

  // Adds the region that follows end().
  void Append(FileRegion region);
  uint64_t begin() const { return begin_; }
  uint64_t end() const { return end_; }
  uint64_t size() const { return end_ - begin_; }
  bool empty() const { return end_ == begin_; }
  const std::vector<FileRegion>& regions() const { return regions_; }
  std::vector<FileRegion> TakeRegions() && { return std::move(regions_); }

  // Copies the bytes at [at, at + out.size()) (positions in the object);
  // false when they are not all in the range or a file read fell short.
  bool Copy(uint64_t at, MutableByteView out) const;
  // The part of this range in [from, to) (clamped to it), sharing its regions.
  RemoteRange Slice(uint64_t from, uint64_t to) const;
  // Every byte in one buffer; kIoError when a file read fell short.
  Result<Bytes> Gather() const;

 private:
  uint64_t begin_ = 0;
  uint64_t end_ = 0;
  std::vector<FileRegion> regions_;
};

}  // namespace strata::tiered
