#include "tiered/webhdfs_redirects.h"

#include <fmt/format.h>

#include <limits>
#include <string_view>

namespace strata::tiered {

std::optional<std::string> WebHdfsRedirects::Find(const std::string& file) const {
  std::lock_guard lock(mu_);
  auto it = urls_.find(file);
  if (it == urls_.end()) return std::nullopt;
  return it->second;
}

void WebHdfsRedirects::Remember(const std::string& file, const std::string& datanode_url) {
  std::lock_guard lock(mu_);
  auto [it, added] = urls_.insert_or_assign(file, datanode_url);
  if (!added) return;
  order_.push_back(file);
  while (urls_.size() > max_files_ && !order_.empty()) {
    urls_.erase(order_.front());
    order_.pop_front();
  }
  // Forgotten entries leave names behind in order_; keep it from growing past
  // twice the bound.
  if (order_.size() > 2 * max_files_) {
    std::deque<std::string> live;
    for (const std::string& f : order_) {
      if (urls_.count(f) != 0) live.push_back(f);
    }
    order_ = std::move(live);
  }
}

void WebHdfsRedirects::Forget(const std::string& file, const std::string& datanode_url) {
  std::lock_guard lock(mu_);
  auto it = urls_.find(file);
  if (it != urls_.end() && it->second == datanode_url) urls_.erase(it);
}

std::string WebHdfsRedirects::WithRange(const std::string& url, uint64_t offset, uint64_t length) {
  const size_t q = url.find('?');
  std::string out = url.substr(0, q == std::string::npos ? url.size() : q);
  char sep = '?';
  if (q != std::string::npos) {
    std::string_view query = std::string_view(url).substr(q + 1);
    while (!query.empty()) {
      const size_t amp = query.find('&');
      const std::string_view param = query.substr(0, amp);
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
      if (param.empty() || param.starts_with("offset=") || param.starts_with("length=")) continue;
      out += sep;
      out += param;
      sep = '&';
    }
  }
  out += fmt::format("{}offset={}", sep, offset);
  if (length != std::numeric_limits<uint64_t>::max()) out += fmt::format("&length={}", length);
  return out;
}

}  // namespace strata::tiered
