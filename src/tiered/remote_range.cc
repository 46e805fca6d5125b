#include "tiered/remote_range.h"

#include <algorithm>
#include <memory>

namespace strata::tiered {

namespace {

// `r` without its first `skip` bytes, `length` long.
FileRegion SubRegion(const FileRegion& r, uint64_t skip, uint64_t length) {
  FileRegion out = r;
  if (out.in_memory()) {
    out.data += skip;
  } else {
    out.offset += skip;
  }
  out.length = length;
  return out;
}

}  // namespace

RemoteRange RemoteRange::OfBytes(uint64_t begin, Bytes bytes) {
  RemoteRange range(begin);
  auto owned = std::make_shared<const Bytes>(std::move(bytes));
  range.Append(FileRegion::Memory(owned->data(), owned->size(), owned));
  return range;
}

void RemoteRange::Append(FileRegion region) {
  if (region.length == 0) return;
  end_ += region.length;
  regions_.push_back(std::move(region));
}

bool RemoteRange::Copy(uint64_t at, MutableByteView out) const {
  if (at < begin_ || at > end_ || out.size() > end_ - at) return false;
  uint64_t pos = begin_;  // where the current region starts
  size_t done = 0;
  for (const FileRegion& r : regions_) {
    if (done == out.size()) break;
    const uint64_t want = at + done;
    if (want < pos + r.length) {
      const uint64_t skip = want - pos;
      const uint64_t n = std::min<uint64_t>(r.length - skip, out.size() - done);
      if (!CopyRegionBytes(r, skip, n, out.data() + done)) return false;
      done += size_t(n);
    }
    pos += r.length;
  }
  return done == out.size();
}

RemoteRange RemoteRange::Slice(uint64_t from, uint64_t to) const {
  from = std::clamp(from, begin_, end_);
  to = std::clamp(to, from, end_);
  RemoteRange out(from);
  uint64_t pos = begin_;
  for (const FileRegion& r : regions_) {
    const uint64_t r_end = pos + r.length;
    const uint64_t lo = std::max(pos, from), hi = std::min(r_end, to);
    if (lo < hi) out.Append(SubRegion(r, lo - pos, hi - lo));
    pos = r_end;
    if (pos >= to) break;
  }
  return out;
}

Result<Bytes> RemoteRange::Gather() const {
  Bytes out(size());
  if (!Copy(begin_, MutableByteView(out.data(), out.size()))) {
    return MakeError(Errc::kIoError, "a cached remote chunk was shorter than indexed");
  }
  return out;
}

}  // namespace strata::tiered
