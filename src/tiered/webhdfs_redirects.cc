#include "tiered/webhdfs_redirects.h"

#include <fmt/format.h>

#include <limits>
#include <string_view>

namespace strata::tiered {

std::optional<std::string> WebHdfsRedirects::Find(const std::string& file) const {
  std::lock_guard lock(mu_);
  auto it = urls_.find(file);
  if (it == urls_.end()) return std::nullopt;
  return it->second.url;
}

void WebHdfsRedirects::Remember(const std::string& file, const std::string& datanode_url) {
  std::lock_guard lock(mu_);
  auto it = urls_.find(file);
  if (it != urls_.end()) {
    it->second.url = datanode_url;  // keeps its place
    return;
  }
  const uint64_t added = next_added_++;
  urls_.emplace(file, Entry{datanode_url, added});
  order_.emplace_back(file, added);
  while (urls_.size() > max_files_ && !order_.empty()) {
    const auto& [old, when] = order_.front();
    auto e = urls_.find(old);
    if (e != urls_.end() && e->second.added == when) urls_.erase(e);
    order_.pop_front();
  }
  // Forgotten entries leave their places behind in order_; keep it from
  // growing past twice the bound.
  if (order_.size() > 2 * max_files_) {
    std::erase_if(order_, [&](const auto& place) {
      auto e = urls_.find(place.first);
      return e == urls_.end() || e->second.added != place.second;
    });
  }
}

void WebHdfsRedirects::Forget(const std::string& file, const std::string& datanode_url) {
  std::lock_guard lock(mu_);
  auto it = urls_.find(file);
  if (it != urls_.end() && it->second.url == datanode_url) urls_.erase(it);
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
