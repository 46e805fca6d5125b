#include "storage/leader_epoch_cache.h"

#include <fmt/format.h>

#include <charconv>
#include <sstream>

namespace strata::storage {

namespace fs = std::filesystem;

namespace {

template <typename T>
bool ParseNumber(const std::string& s, T* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

Result<LeaderEpochCache> LeaderEpochCache::Load(const fs::path& dir, Env* env) {
  LeaderEpochCache cache;
  cache.path_ = dir / kLeaderEpochCheckpoint;
  cache.env_ = env;
  auto data = env->ReadFile(cache.path_);
  if (!data.ok()) {
    if (data.error().code == Errc::kNotFound) return cache;
    return data.take_error();
  }
  auto entries = Parse(std::string_view(reinterpret_cast<const char*>(data->data()), data->size()));
  if (!entries.ok()) {
    return MakeError(Errc::kCorrupt,
                     fmt::format("{}: {}", cache.path_.string(), entries.error().message));
  }
  cache.entries_ = std::move(*entries);
  return cache;
}

Result<std::vector<EpochEntry>> LeaderEpochCache::Parse(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  int version = -1;
  int count = -1;
  if (!std::getline(in, line) || !ParseNumber(line, &version) || version != 0) {
    return MakeError(Errc::kCorrupt, "bad version line");
  }
  if (!std::getline(in, line) || !ParseNumber(line, &count) || count < 0) {
    return MakeError(Errc::kCorrupt, "bad count line");
  }
  std::vector<EpochEntry> entries;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string epoch_s, offset_s, extra;
    EpochEntry e;
    int32_t epoch = 0;
    int64_t start_offset = 0;
    if (!(fields >> epoch_s >> offset_s) || (fields >> extra) || !ParseNumber(epoch_s, &epoch) ||
        !ParseNumber(offset_s, &start_offset)) {
      return MakeError(Errc::kCorrupt, fmt::format("bad entry line '{}'", line));
    }
    e.epoch = LeaderEpoch(epoch);
    e.start_offset = Offset(start_offset);
    if (!entries.empty() &&
        (e.epoch <= entries.back().epoch || e.start_offset < entries.back().start_offset)) {
      return MakeError(Errc::kCorrupt, fmt::format("entry '{}' goes backwards", line));
    }
    entries.push_back(e);
  }
  if (static_cast<int>(entries.size()) != count) {
    return MakeError(Errc::kCorrupt, fmt::format("count line says {} but {} entries follow", count,
                                                 entries.size()));
  }
  return entries;
}

std::string LeaderEpochCache::Format(const std::vector<EpochEntry>& entries) {
  std::string out = fmt::format("0\n{}\n", entries.size());
  for (const EpochEntry& e : entries)
    out += fmt::format("{} {}\n", e.epoch, e.start_offset.value());
  return out;
}

Status LeaderEpochCache::Persist(const std::vector<EpochEntry>& entries) const {
  std::string text = Format(entries);
  return env_->WriteFileAtomic(
      path_, ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Status LeaderEpochCache::Assign(LeaderEpoch epoch, Offset start_offset) {
  if (epoch < LeaderEpoch(0) || start_offset < 0_o) return Status::Ok();
  if (!entries_.empty()) {
    const EpochEntry& last = entries_.back();
    if (epoch == last.epoch && start_offset >= last.start_offset) return Status::Ok();
  }
  // Keep the history monotonic, as Kafka's assign does.
  std::vector<EpochEntry> next = entries_;
  while (!next.empty() &&
         (next.back().epoch >= epoch || next.back().start_offset >= start_offset)) {
    next.pop_back();
  }
  next.push_back({epoch, start_offset});
  STRATA_RETURN_IF_ERROR(Persist(next));
  entries_ = std::move(next);
  return Status::Ok();
}

Status LeaderEpochCache::TruncateFromEnd(Offset end_offset) {
  size_t before = entries_.size();
  while (!entries_.empty() && entries_.back().start_offset >= end_offset) entries_.pop_back();
  return entries_.size() == before ? Status::Ok() : Persist();
}

Status LeaderEpochCache::Clear() {
  if (entries_.empty()) return Status::Ok();
  entries_.clear();
  return Persist();
}

Status LeaderEpochCache::TruncateFromStart(Offset start_offset) {
  size_t first_kept = 0;
  while (first_kept < entries_.size() && entries_[first_kept].start_offset <= start_offset) {
    ++first_kept;
  }
  if (first_kept == 0) return Status::Ok();
  EpochEntry covering{entries_[first_kept - 1].epoch, start_offset};
  if (first_kept == 1 && entries_[0] == covering) return Status::Ok();
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<long>(first_kept));
  entries_.insert(entries_.begin(), covering);
  return Persist();
}

std::pair<LeaderEpoch, Offset> LeaderEpochCache::EndOffsetFor(LeaderEpoch epoch,
                                                              Offset log_end_offset) const {
  if (epoch < LeaderEpoch(0) || entries_.empty()) return {kNoLeaderEpoch, kNoOffset};
  if (epoch == entries_.back().epoch) return {epoch, log_end_offset};
  // First entry with a higher epoch.
  size_t higher = 0;
  while (higher < entries_.size() && entries_[higher].epoch <= epoch) ++higher;
  if (higher == entries_.size()) return {kNoLeaderEpoch, kNoOffset};  // above every known epoch
  if (higher == 0) {
    // Older than anything we know: Kafka answers with the requested epoch
    // and the start of the first known one.
    return {epoch, entries_[0].start_offset};
  }
  return {entries_[higher - 1].epoch, entries_[higher].start_offset};
}

}  // namespace strata::storage
