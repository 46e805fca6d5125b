#pragma once
// WebHdfsRedirects: the DataNode OPEN URL each file was last read from, so
// the next read of that file goes straight to the DataNode instead of asking
// the NameNode for a redirect first (a round trip per chunk otherwise). A
// DataNode's WebHDFS OPEN serves any range of the file, so one redirect
// serves the whole file. Entries are hints: a failed read drops its entry
// and goes through the NameNode again. Bounded (oldest entries go first).
//
// Thread-safety: every method is safe from any thread.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace strata::tiered {

class WebHdfsRedirects {
 public:
  explicit WebHdfsRedirects(size_t max_files = 4096) : max_files_(max_files) {}

  std::optional<std::string> Find(const std::string& file) const;
  void Remember(const std::string& file, const std::string& datanode_url);
  // Drops the entry if it is still `datanode_url` (a newer one stays).
  void Forget(const std::string& file, const std::string& datanode_url);

  void CountReuse() { reused_.fetch_add(1); }
  uint64_t reused() const { return reused_.load(); }

  // `url` with its offset and length parameters replaced (length omitted for
  // kToEnd, i.e. UINT64_MAX).
  static std::string WithRange(const std::string& url, uint64_t offset, uint64_t length);

 private:
  const size_t max_files_;
  mutable std::mutex mu_;
  struct Entry {
    std::string url;
    uint64_t added = 0;  // when it was remembered: its place in order_
  };
  std::map<std::string, Entry> urls_;  // guarded by mu_
  // (file, added) in the order remembered, for the bound: a file forgotten
  // and remembered again is there twice, and only its newer place counts.
  std::deque<std::pair<std::string, uint64_t>> order_;  // guarded by mu_
  uint64_t next_added_ = 0;                              // guarded by mu_
  std::atomic<uint64_t> reused_{0};
};

}  // namespace strata::tiered
