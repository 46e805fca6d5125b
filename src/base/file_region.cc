#include "base/file_region.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace strata {

int PreadAll(int fd, uint64_t pos, uint8_t* out, uint64_t n) {
  uint64_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, out + done, n - done, static_cast<off_t>(pos + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno;
    if (got == 0) return EIO;
    done += uint64_t(got);
  }
  return 0;
}

bool CopyRegionBytes(const FileRegion& region, uint64_t from, uint64_t n, uint8_t* out) {
  if (from > region.length || n > region.length - from) return false;
  if (region.in_memory()) {
    if (n > 0) std::memcpy(out, region.data + from, n);
    return true;
  }
  return PreadAll(region.fd, region.offset + from, out, n) == 0;
}

}  // namespace strata
