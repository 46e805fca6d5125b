#pragma once
// LogCleaner: the background log compaction of a broker (Kafka's LogCleaner
// and LogCleanerManager). Logs are registered by partition; each of
// log.cleaner.threads threads repeatedly picks the registered log with
// cleanup.policy=compact whose dirty ratio is highest among those that
// reach min.cleanable.dirty.ratio or hold records past
// max.compaction.lag.ms, and runs Log::Clean on it with its own OffsetMap
// (log.cleaner.dedupe.buffer.size / threads bytes). With nothing to clean a
// thread sleeps log.cleaner.backoff.ms. A log whose pass fails with anything
// but a shutdown is marked uncleanable (skipped until re-registered), as in
// Kafka. Progress counters are kept for metrics.
//
// Thread-safety: all methods are safe from any thread. Lock order: the
// cleaner's mutex may be held while a Log's mutex is taken, never the
// reverse.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "base/topic_partition.h"
#include "storage/cleaner_offset_map.h"
#include "storage/log.h"

namespace strata::storage {

// Broker settings (log.cleaner.*).
struct CleanerConfig {
  int threads = 1;                            // log.cleaner.threads
  int64_t backoff_ms = 15000;                 // log.cleaner.backoff.ms
  int64_t dedupe_buffer_bytes = 128ll << 20;  // log.cleaner.dedupe.buffer.size (all threads)
  double load_factor = OffsetMap::kDefaultLoadFactor;  // log.cleaner.io.buffer.load.factor
};

// A snapshot of the cleaner's counters (monotonic totals unless noted).
struct CleanerStats {
  int64_t passes = 0;            // successful cleaning passes
  int64_t segments_cleaned = 0;  // old segments replaced
  int64_t segments_written = 0;  // cleaned segments swapped in
  int64_t bytes_read = 0;        // segment bytes rewritten (offset-map reads excluded)
  int64_t map_bytes_read = 0;    // dirty bytes read to build offset maps
  int64_t bytes_written = 0;
  int64_t records_read = 0;
  int64_t records_retained = 0;
  int64_t errors = 0;                  // failed passes
  int64_t last_clean_duration_ms = 0;  // of the latest pass
  double max_dirty_ratio = 0;          // of the dirtiest log at the latest selection
  int uncleanable_logs = 0;            // current count
};

class LogCleaner {
 public:
  LogCleaner(const CleanerConfig& config, Clock* clock);
  ~LogCleaner();  // Stop()s
  LogCleaner(const LogCleaner&) = delete;
  LogCleaner& operator=(const LogCleaner&) = delete;

  // Starts config.threads background threads (none when threads <= 0).
  void Start();
  // Tells the threads to exit after their current pass, without waiting.
  void RequestStop();
  // RequestStop() and join. A pass in progress finishes first; Close() or
  // Delete() of its log aborts it sooner.
  void Stop();

  // Adds (or replaces) a log; logs that are not compacted are simply never
  // chosen, so every log may be registered (topic configs can change).
  void Register(const TopicPartition& tp, std::shared_ptr<Log> log);
  void Unregister(const TopicPartition& tp);
  // Wakes sleeping threads (e.g. after a topic became compacted).
  void Wake();

  // One selection + pass on the calling thread with `map` (what each
  // background thread does in a loop). True when a log was cleaned.
  bool CleanFilthiest(OffsetMap& map);
  // Cleans `tp` now whatever its dirty ratio (tests, tools).
  Result<CleaningResult> CleanNow(const TopicPartition& tp, OffsetMap& map);

  CleanerStats stats() const;

 private:
  struct Entry {
    std::shared_ptr<Log> log;
    bool in_progress = false;
    bool uncleanable = false;
  };

  void Run(int id);
  // Marks the chosen log in progress; nullopt when nothing is cleanable.
  std::optional<std::pair<TopicPartition, std::shared_ptr<Log>>> GrabFilthiest();
  Result<CleaningResult> RunPass(const TopicPartition& tp, Log& target, OffsetMap& map);
  void DoneCleaning(const TopicPartition& tp, bool failed);

  const CleanerConfig config_;
  Clock* const clock_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::map<TopicPartition, Entry> logs_;
  std::vector<std::thread> threads_;
  bool stopping_ = false;
  uint64_t wake_generation_ = 0;

  std::atomic<int64_t> passes_{0};
  std::atomic<int64_t> segments_cleaned_{0};
  std::atomic<int64_t> segments_written_{0};
  std::atomic<int64_t> bytes_read_{0};
  std::atomic<int64_t> map_bytes_read_{0};
  std::atomic<int64_t> bytes_written_{0};
  std::atomic<int64_t> records_read_{0};
  std::atomic<int64_t> records_retained_{0};
  std::atomic<int64_t> errors_{0};
  std::atomic<int64_t> last_clean_duration_ms_{0};
  std::atomic<double> max_dirty_ratio_{0};
};

}  // namespace strata::storage
