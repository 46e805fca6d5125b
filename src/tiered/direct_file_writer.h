#pragma once
// DirectFileWriter: writes whole files with O_DIRECT, so data that is only
// kept for later (a remote chunk cached on its first read) goes to disk
// without being copied into the page cache by the CPU. Files under
// `min_direct_bytes` go through the page cache (for them the wait for the
// disk costs more than the copy saves), as do all files where the filesystem
// refuses O_DIRECT, at open (tmpfs) or at the first write.
//
// O_DIRECT needs aligned memory, lengths and offsets: each file's bytes are
// copied into an aligned scratch buffer (reused, so it stays warm) and
// written padded to the alignment, then the file is cut to its length.
//
// Thread-safety: one thread at a time (the scratch buffer is shared).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "base/bytes.h"
#include "base/result.h"

namespace strata::tiered {

class DirectFileWriter {
 public:
  static constexpr size_t kAlignment = 4096;
  explicit DirectFileWriter(size_t min_direct_bytes = 1 << 20)
      : min_direct_bytes_(min_direct_bytes) {}

  // Creates or truncates `path` and writes `data` to it.
  Status Write(const std::string& path, ByteView data);
  // False once the filesystem refused O_DIRECT (writes are buffered then).
  bool direct() const { return direct_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  // Writes `data` padded to the alignment, then cuts the file to its
  // length: 0 or the errno.
  int WriteDirect(int fd, ByteView data);

  const size_t min_direct_bytes_;
  bool direct_ = true;
  std::unique_ptr<uint8_t, Free> scratch_;
  size_t scratch_bytes_ = 0;
};

}  // namespace strata::tiered
