#include "tiered/remote_manifest.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>

namespace strata::tiered {

namespace {

using json = nlohmann::json;
using S = RemoteSegmentState;

Result<RemoteSegmentState> StateFromName(const std::string& name) {
  for (S s : {S::kCopyStarted, S::kCopyFinished, S::kDeleteStarted, S::kDeleteFinished}) {
    if (name == RemoteSegmentStateName(s)) return s;
  }
  return MakeError(Errc::kCorrupt, "unknown remote segment state " + name);
}

}  // namespace

const char* RemoteSegmentStateName(RemoteSegmentState s) {
  switch (s) {
    case S::kCopyStarted:
      return "COPY_STARTED";
    case S::kCopyFinished:
      return "COPY_FINISHED";
    case S::kDeleteStarted:
      return "DELETE_STARTED";
    case S::kDeleteFinished:
      return "DELETE_FINISHED";
  }
  return "?";
}

const RemoteSegment* RemoteManifest::FindReadable(Offset offset) const {
  for (const RemoteSegment& s : segments_) {
    if (s.state == S::kCopyFinished && s.base_offset <= offset && offset <= s.end_offset) return &s;
  }
  return nullptr;
}

RemoteSegment* RemoteManifest::Find(Offset base_offset, Offset end_offset) {
  for (RemoteSegment& s : segments_) {
    if (s.base_offset == base_offset && s.end_offset == end_offset && !s.replaced) return &s;
  }
  return nullptr;
}

void RemoteManifest::Insert(RemoteSegment segment) {
  auto at = std::find_if(segments_.begin(), segments_.end(), [&](const RemoteSegment& x) {
    return std::pair(x.base_offset, x.end_offset) >
           std::pair(segment.base_offset, segment.end_offset);
  });
  segments_.insert(at, std::move(segment));
}

int RemoteManifest::RetireCoveredBy(const RemoteSegment& segment) {
  int retired = 0;
  for (RemoteSegment& s : segments_) {
    if (&s == &segment || s.uuid == segment.uuid || s.state != S::kCopyFinished) continue;
    if (s.base_offset >= segment.base_offset && s.end_offset <= segment.end_offset) {
      s.state = S::kDeleteStarted;
      s.replaced = true;
      ++retired;
    }
  }
  return retired;
}

Offset RemoteManifest::remote_log_start_offset() const {
  for (const RemoteSegment& s : segments_) {
    if (s.state == S::kCopyFinished) return s.base_offset;
  }
  return kNoOffset;
}

Offset RemoteManifest::remote_log_end_offset() const {
  Offset end = kNoOffset;
  for (const RemoteSegment& s : segments_) {
    if (s.state == S::kCopyFinished) end = std::max(end, s.end_offset);
  }
  return end;
}

int64_t RemoteManifest::remote_bytes() const {
  int64_t total = 0;
  for (const RemoteSegment& s : segments_) {
    if (s.state == S::kCopyFinished) total += s.size;
  }
  return total;
}

size_t RemoteManifest::PruneDeleted() {
  return std::erase_if(segments_,
                       [](const RemoteSegment& s) { return s.state == S::kDeleteFinished; });
}

Bytes RemoteManifest::Serialize() const {
  json segs = json::array();
  for (const RemoteSegment& s : segments_) {
    segs.push_back({{"base_offset", s.base_offset.value()},
                    {"end_offset", s.end_offset.value()},
                    {"size", s.size},
                    {"max_timestamp", s.max_timestamp},
                    {"uuid", s.uuid},
                    {"state", RemoteSegmentStateName(s.state)},
                    {"has_snapshot", s.has_snapshot},
                    {"has_txn_index", s.has_txn_index},
                    {"replaced", s.replaced}});
  }
  json doc = {{"version", 1},
              {"leader_epoch", leader_epoch_.value()},
              {"log_start_offset", remote_log_start_offset().value()},
              {"log_end_offset", remote_log_end_offset().value()},
              {"segments", segs}};
  std::string text = doc.dump(1);
  return Bytes(text.begin(), text.end());
}

Result<RemoteManifest> RemoteManifest::Parse(ByteView data) {
  json doc = json::parse(data.begin(), data.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("segments") ||
      !doc["segments"].is_array()) {
    return MakeError(Errc::kCorrupt, "manifest is not valid JSON");
  }
  RemoteManifest m;
  try {
    m.leader_epoch_ = LeaderEpoch(doc.value("leader_epoch", int32_t{-1}));
    for (const json& j : doc["segments"]) {
      RemoteSegment s;
      s.base_offset = Offset(j.at("base_offset").get<int64_t>());
      s.end_offset = Offset(j.at("end_offset").get<int64_t>());
      s.size = j.at("size").get<int64_t>();
      s.max_timestamp = j.at("max_timestamp").get<int64_t>();
      s.uuid = j.at("uuid").get<std::string>();
      s.has_snapshot = j.value("has_snapshot", false);
      s.has_txn_index = j.value("has_txn_index", false);
      s.replaced = j.value("replaced", false);
      STRATA_ASSIGN_OR_RETURN(s.state, StateFromName(j.at("state").get<std::string>()));
      if (!m.segments_.empty() &&
          std::pair(m.segments_.back().base_offset, m.segments_.back().end_offset) >
              std::pair(s.base_offset, s.end_offset)) {
        return MakeError(Errc::kCorrupt, "manifest segments out of order");
      }
      m.segments_.push_back(std::move(s));
    }
  } catch (const json::exception& e) {
    return MakeError(Errc::kCorrupt, fmt::format("manifest field: {}", e.what()));
  }
  return m;
}

std::string ManifestName(LeaderEpoch leader_epoch) {
  return leader_epoch < LeaderEpoch(0) ? "manifest.json"
                                       : fmt::format("manifest-{}.json", leader_epoch);
}

std::string RemotePartitionDir(const std::string& topic, int32_t partition,
                               const std::string& topic_id_base64) {
  return fmt::format("{}-{}-{}", topic, partition, topic_id_base64);
}

std::string RemoteObjectPath(const std::string& dir, const RemoteSegment& seg, const char* ext) {
  return fmt::format("{}/{:020d}-{}.{}", dir, seg.base_offset.value(), seg.uuid, ext);
}

std::string RandomUuidBase64() {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  thread_local std::mt19937_64 rng(std::random_device{}());
  std::string out;
  for (int i = 0; i < 22; ++i) out.push_back(kAlphabet[rng() % 64]);
  return out;
}

}  // namespace strata::tiered
