#include "broker/disk_high_mark.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include "base/log.h"
#include "base/metrics.h"
#include "broker/logger.h"

namespace strata::broker {

DiskHighMark::DiskHighMark(DiskHighMarkOptions options, Clock* clock,
                           std::function<int64_t()> log_bytes)
    : opts_(std::move(options)), clock_(clock), log_bytes_(std::move(log_bytes)) {
  if (!opts_.register_metrics) return;
  auto state = state_;
  auto& reg = metrics::Global();
  reg.SetCounterFunc("strata_produce_disk_high_mark_rejections_total",
                     "Produce partitions refused because local disk usage is above the high mark",
                     {}, [state] { return double(state->rejections.load()); });
  reg.SetGauge("strata_log_dir_high_mark_exceeded",
               "1 while local disk usage is above the high mark (produce refused)", {},
               [state] { return state->exceeded.load() ? 1.0 : 0.0; });
}

std::optional<std::string> DiskHighMark::Check() {
  if (!enabled()) return std::nullopt;
  const int64_t now = clock_->MonotonicMs();
  int64_t due = next_refresh_ms_.load();
  // One caller refreshes; the others use the cached answer.
  if (now >= due && next_refresh_ms_.compare_exchange_strong(due, now + opts_.refresh_ms)) {
    Refresh();
  }
  if (!state_->exceeded.load()) return std::nullopt;
  state_->rejections.fetch_add(1);
  std::lock_guard lock(mu_);
  return reason_;
}

void DiskHighMark::Refresh() {
  std::optional<std::string> reason = Measure();
  std::lock_guard lock(mu_);
  const bool was = state_->exceeded.load();
  if (reason) {
    reason_ = *reason;
    if (!was) Log()->warn("refusing produce: {}", *reason);
  } else if (was) {
    Log()->info("local disk usage back under the high mark: accepting produce again");
  }
  state_->exceeded.store(reason.has_value());
}

std::optional<std::string> DiskHighMark::Measure() const {
  if (opts_.max_bytes > 0) {
    const int64_t used = log_bytes_();
    if (used > opts_.max_bytes) {
      return fmt::format(
          "local log dir usage {} bytes is above strata.log.dir.high.mark.bytes={} (remote "
          "uploads or retention not keeping up); retry later",
          used, opts_.max_bytes);
    }
  }
  if (opts_.max_percent > 0 && opts_.max_percent < 100) {
    struct statvfs fs {};
    if (::statvfs(opts_.log_dir.c_str(), &fs) == 0) {
      // As df: used / (used + available to unprivileged users).
      const double used = double(fs.f_blocks - fs.f_bfree);
      const double avail = double(fs.f_bavail);
      const double pct = used + avail > 0 ? 100.0 * used / (used + avail) : 0;
      if (pct > opts_.max_percent) {
        return fmt::format(
            "filesystem of the log dir {} is {:.1f}% full, above "
            "strata.log.dir.high.mark.percent={}; retry later",
            opts_.log_dir, pct, opts_.max_percent);
      }
    }
  }
  return std::nullopt;
}

}  // namespace strata::broker
