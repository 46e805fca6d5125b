#include "storage/cleaner.h"

#include <fmt/format.h>

#include <chrono>

#include "base/log.h"

namespace strata::storage {

namespace {

// Errors that say "not now" rather than "this log is broken".
bool Transient(Errc code) { return code == Errc::kShuttingDown || code == Errc::kUnavailable; }

}  // namespace

LogCleaner::LogCleaner(const CleanerConfig& config, Clock* clock)
    : config_(config), clock_(clock) {}

LogCleaner::~LogCleaner() { Stop(); }

void LogCleaner::Start() {
  std::lock_guard lock(mu_);
  if (!threads_.empty() || config_.threads <= 0) return;
  stopping_ = false;
  for (int i = 0; i < config_.threads; ++i) threads_.emplace_back([this, i] { Run(i); });
  log::Get("storage")->info("log cleaner started: {} threads, {} MiB dedupe buffer, backoff {} ms",
                            config_.threads, config_.dedupe_buffer_bytes >> 20, config_.backoff_ms);
}

void LogCleaner::RequestStop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
}

void LogCleaner::Stop() {
  RequestStop();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
}

void LogCleaner::Register(const TopicPartition& tp, std::shared_ptr<Log> log) {
  std::lock_guard lock(mu_);
  Entry& e = logs_[tp];
  e.log = std::move(log);
  e.uncleanable = false;
}

void LogCleaner::Unregister(const TopicPartition& tp) {
  std::lock_guard lock(mu_);
  logs_.erase(tp);
}

void LogCleaner::Wake() {
  {
    std::lock_guard lock(mu_);
    ++wake_generation_;
  }
  wake_.notify_all();
}

void LogCleaner::Run(int id) {
  const size_t memory = size_t(config_.dedupe_buffer_bytes / std::max(config_.threads, 1));
  OffsetMap map(memory, config_.load_factor);
  log::Get("storage")->info("cleaner thread {}: offset map of {} slots ({} keys per pass)", id,
                            map.slots(), map.max_entries());
  for (;;) {
    uint64_t generation = 0;
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
      generation = wake_generation_;
    }
    if (CleanFilthiest(map)) continue;
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, std::chrono::milliseconds(config_.backoff_ms),
                   [&] { return stopping_ || wake_generation_ != generation; });
  }
}

std::optional<std::pair<TopicPartition, std::shared_ptr<Log>>> LogCleaner::GrabFilthiest() {
  std::vector<std::pair<TopicPartition, std::shared_ptr<Log>>> candidates;
  {
    std::lock_guard lock(mu_);
    for (const auto& [tp, e] : logs_) {
      if (!e.in_progress && !e.uncleanable) candidates.emplace_back(tp, e.log);
    }
  }
  // Estimates take each log's mutex; do not hold ours meanwhile.
  const int64_t now = clock_->NowMs();
  const std::pair<TopicPartition, std::shared_ptr<Log>>* best = nullptr;
  double best_ratio = -1;
  double max_ratio = 0;
  for (const auto& candidate : candidates) {
    CleaningEstimate e = candidate.second->EstimateCleaning(now);
    if (!e.compacted) continue;
    max_ratio = std::max(max_ratio, e.dirty_ratio());
    if (e.ShouldClean() && e.dirty_ratio() > best_ratio) {
      best = &candidate;
      best_ratio = e.dirty_ratio();
    }
  }
  max_dirty_ratio_.store(max_ratio);
  if (best == nullptr) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = logs_.find(best->first);
  if (it == logs_.end() || it->second.in_progress || it->second.log != best->second) {
    return std::nullopt;  // unregistered or taken meanwhile; the next round retries
  }
  it->second.in_progress = true;
  return *best;
}

bool LogCleaner::CleanFilthiest(OffsetMap& map) {
  auto chosen = GrabFilthiest();
  if (!chosen) return false;
  auto result = RunPass(chosen->first, *chosen->second, map);
  DoneCleaning(chosen->first, !result.ok() && !Transient(result.error().code));
  return result.ok();
}

Result<CleaningResult> LogCleaner::CleanNow(const TopicPartition& tp, OffsetMap& map) {
  std::shared_ptr<Log> target;
  {
    std::lock_guard lock(mu_);
    auto it = logs_.find(tp);
    if (it == logs_.end()) return MakeError(Errc::kNotFound, "no log " + tp.ToString());
    if (it->second.in_progress) {
      return MakeError(Errc::kUnavailable, tp.ToString() + " is being cleaned");
    }
    it->second.in_progress = true;
    target = it->second.log;
  }
  auto result = RunPass(tp, *target, map);
  DoneCleaning(tp, !result.ok() && !Transient(result.error().code));
  return result;
}

Result<CleaningResult> LogCleaner::RunPass(const TopicPartition& tp, Log& target, OffsetMap& map) {
  auto result = target.Clean(map, clock_->NowMs());
  if (!result.ok()) {
    if (!Transient(result.error().code)) {
      errors_.fetch_add(1);
      log::Get("storage")->error("cleaning {} failed; it is now uncleanable: {}", tp.ToString(),
                                 result.error().message);
    }
    return result;
  }
  const CleaningResult& r = *result;
  passes_.fetch_add(1);
  segments_cleaned_.fetch_add(r.segments_cleaned);
  segments_written_.fetch_add(r.segments_written);
  bytes_read_.fetch_add(r.bytes_read);
  map_bytes_read_.fetch_add(r.map_bytes_read);
  bytes_written_.fetch_add(r.bytes_written);
  records_read_.fetch_add(r.records_read);
  records_retained_.fetch_add(r.records_retained);
  last_clean_duration_ms_.store(r.duration_ms);
  return result;
}

void LogCleaner::DoneCleaning(const TopicPartition& tp, bool failed) {
  std::lock_guard lock(mu_);
  auto it = logs_.find(tp);
  if (it == logs_.end()) return;
  it->second.in_progress = false;
  if (failed) it->second.uncleanable = true;
}

CleanerStats LogCleaner::stats() const {
  CleanerStats s;
  s.passes = passes_.load();
  s.segments_cleaned = segments_cleaned_.load();
  s.segments_written = segments_written_.load();
  s.bytes_read = bytes_read_.load();
  s.map_bytes_read = map_bytes_read_.load();
  s.bytes_written = bytes_written_.load();
  s.records_read = records_read_.load();
  s.records_retained = records_retained_.load();
  s.errors = errors_.load();
  s.last_clean_duration_ms = last_clean_duration_ms_.load();
  s.max_dirty_ratio = max_dirty_ratio_.load();
  std::lock_guard lock(mu_);
  for (const auto& [tp, e] : logs_) s.uncleanable_logs += e.uncleanable ? 1 : 0;
  return s;
}

}  // namespace strata::storage
