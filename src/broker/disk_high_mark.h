#pragma once
// DiskHighMark: produce back-pressure on local disk usage. When the partition logs of this broker
// hold more than `max_bytes`, or the log dir's filesystem is fuller than `max_percent`, Produce is
// refused with a retriable KAFKA_STORAGE_ERROR instead of filling the disk (e.g. while the remote
// store is down, local retention cannot delete un-uploaded segments). It clears by itself once
// usage drops. Usage is sampled at most every `refresh_ms`, so Check() is cheap on the produce
// path; state changes are logged once each (not per request). Exports
// strata_produce_disk_high_mark_rejections_total and strata_log_dir_high_mark_exceeded.
// Thread-safe.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/clock.h"

namespace strata::broker {

struct DiskHighMarkOptions {
  std::string log_dir;
  int64_t max_bytes = 0;  // 0 = no byte mark
  int max_percent = 0;    // 0 (or >= 100) = no filesystem mark
  int64_t refresh_ms = 1000;
  bool register_metrics = true;
};

class DiskHighMark {
 public:
  // `log_bytes` returns the total bytes of this broker's partition logs.
  DiskHighMark(DiskHighMarkOptions options, Clock* clock, std::function<int64_t()> log_bytes);

  // nullopt when produce may go on; otherwise why not (for the error message).
  // Counts a rejection each time it returns a reason.
  std::optional<std::string> Check();
  uint64_t rejections() const { return state_->rejections.load(); }
  bool enabled() const {
    return opts_.max_bytes > 0 || (opts_.max_percent > 0 && opts_.max_percent < 100);
  }

 private:
  struct State {  // shared with the metric callbacks, which may outlive this object
    std::atomic<uint64_t> rejections{0};
    std::atomic<bool> exceeded{false};
  };
  void Refresh();
  // The reason usage is over a mark, or nullopt.
  std::optional<std::string> Measure() const;

  DiskHighMarkOptions opts_;
  Clock* clock_;
  std::function<int64_t()> log_bytes_;
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::atomic<int64_t> next_refresh_ms_{0};
  std::mutex mu_;
  std::string reason_;  // guarded by mu_; non-empty while exceeded
};

}  // namespace strata::broker
