#include "base/file_region.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace strata {

bool CopyRegionBytes(const FileRegion& region, uint64_t from, uint64_t n, uint8_t* out) {
  if (from > region.length || n > region.length - from) return false;
  if (region.in_memory()) {
    if (n > 0) std::memcpy(out, region.data + from, n);
    return true;
  }
  uint64_t done = 0;
  while (done < n) {
    ssize_t got =
        ::pread(region.fd, out + done, n - done, static_cast<off_t>(region.offset + from + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += uint64_t(got);
  }
  return true;
}

}  // namespace strata
