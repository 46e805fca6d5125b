#include "cluster/keys.h"

#include <charconv>

namespace strata::cluster {

namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::optional<int32_t> ParseInt(std::string_view s) {
  int32_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// Percent-escapes '/' and '%' so a path fits in one key component.
std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '/') {
      out += "%2F";
    } else if (c == '%') {
      out += "%25";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.substr(i, 3) == "%2F") {
      out += '/';
      i += 2;
    } else if (s.substr(i, 3) == "%25") {
      out += '%';
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

KeyLayout::KeyLayout(std::string prefix) : prefix_(std::move(prefix)) {
  if (prefix_.empty() || prefix_.back() != '/') prefix_ += '/';
}

std::string KeyLayout::PendingDeletion(const std::string& remote_dir) const {
  return PendingDeletionsPrefix() + Escape(remote_dir);
}

ParsedKey KeyLayout::Parse(const std::string& key) const {
  using K = ParsedKey::Kind;
  ParsedKey out;
  if (!StartsWith(key, prefix_)) return out;
  std::string_view rest = std::string_view(key).substr(prefix_.size());
  auto after = [&](std::string_view p) { return rest.substr(p.size()); };
  if (rest == "cluster_id") {
    out.kind = K::kClusterId;
  } else if (rest == "controller") {
    out.kind = K::kController;
  } else if (rest == "producer_ids") {
    out.kind = K::kProducerIds;
  } else if (StartsWith(rest, "brokers/")) {
    if (auto id = ParseInt(after("brokers/"))) out = {K::kBroker, {}, *id};
  } else if (StartsWith(rest, "known_brokers/")) {
    if (auto id = ParseInt(after("known_brokers/"))) out = {K::kKnownBroker, {}, *id};
  } else if (StartsWith(rest, "configs/brokers/")) {
    out = {K::kBrokerConfig, std::string(after("configs/brokers/")), -1};
  } else if (StartsWith(rest, "topics/")) {
    out = {K::kTopic, std::string(after("topics/")), -1};
  } else if (StartsWith(rest, "partitions/") || StartsWith(rest, "remote_log/")) {
    bool partition = StartsWith(rest, "partitions/");
    std::string_view tail = partition ? after("partitions/") : after("remote_log/");
    auto slash = tail.find('/');
    if (slash != std::string_view::npos) {
      if (auto p = ParseInt(tail.substr(slash + 1))) {
        out = {partition ? K::kPartition : K::kRemoteLog, std::string(tail.substr(0, slash)), *p};
      }
    }
  } else if (StartsWith(rest, "pending_remote_deletions/")) {
    out = {K::kPendingDeletion, Unescape(after("pending_remote_deletions/")), -1};
  } else if (StartsWith(rest, "deleted_topics/")) {
    out = {K::kDeletedTopic, std::string(after("deleted_topics/")), -1};
  }
  return out;
}

}  // namespace strata::cluster
