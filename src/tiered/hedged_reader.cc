#include "tiered/hedged_reader.h"

#include <algorithm>
#include <optional>
#include <system_error>
#include <thread>

namespace strata::tiered {

using Steady = std::chrono::steady_clock;

// One Get: up to two reads racing, shared by the caller and the read threads.
struct HedgedReader::Race {
  std::string path;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Result<Bytes>> result[2];  // guarded by mu
  std::string first_node;                  // guarded by mu: where read 0 went
  CancelFlag cancel[2] = {MakeCancelFlag(), MakeCancelFlag()};

  // Index of the first successful read, else -1.
  int Winner() const {
    for (int i = 0; i < 2; ++i) {
      if (result[i] && result[i]->ok()) return i;
    }
    return -1;
  }
};

HedgedReader::HedgedReader(std::unique_ptr<RemoteStorage> inner, HedgeOptions options)
    : inner_(std::move(inner)), opts_(options), tokens_(options.max_burst) {}

HedgedReader::~HedgedReader() {
  std::unique_lock lock(tracker_->mu);
  tracker_->cv.wait(lock, [&] { return tracker_->running == 0; });
}

HedgeCounters HedgedReader::counters() const {
  return HedgeCounters{reads_.load(), fired_.load(), won_.load(), skipped_.load(),
                       failures_.load()};
}

bool HedgedReader::TakeHedgeToken() {
  std::lock_guard lock(bucket_mu_);
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

bool HedgedReader::Launch(const std::shared_ptr<Race>& race, int slot, CallOptions opts) {
  opts.cancel = race->cancel[slot];
  auto user_on_source = std::move(opts.on_source);
  opts.on_source = [race, slot, user_on_source](const std::string& node) {
    if (slot == 0) {
      std::lock_guard lock(race->mu);
      race->first_node = node;
    }
    if (user_on_source) user_on_source(node);
  };
  {
    std::lock_guard lock(tracker_->mu);
    ++tracker_->running;
  }
  try {
    std::thread([inner = inner_.get(), race, slot, opts = std::move(opts), tracker = tracker_] {
      auto r = inner->Get(race->path, race->offset, race->length, opts);
      {
        std::lock_guard lock(race->mu);
        race->result[slot].emplace(std::move(r));
      }
      race->cv.notify_all();
      std::lock_guard lock(tracker->mu);
      --tracker->running;
      tracker->cv.notify_all();  // under the lock: the destructor may free nothing we touch
    }).detach();
  } catch (const std::system_error&) {
    std::lock_guard lock(tracker_->mu);
    --tracker_->running;
    return false;
  }
  return true;
}

Result<Bytes> HedgedReader::Get(std::string_view path, uint64_t offset, uint64_t length,
                                const CallOptions& opts) {
  reads_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(bucket_mu_);
    tokens_ = std::min(opts_.max_burst, tokens_ + opts_.max_hedge_ratio);
  }
  auto race = std::make_shared<Race>();
  race->path = std::string(path);
  race->offset = offset;
  race->length = length;
  if (!Launch(race, 0, opts)) return inner_->Get(path, offset, length, opts);  // no thread: inline

  const auto hedge_at = Steady::now() + opts_.threshold;
  bool hedge_decided = false;
  bool hedged = false;
  std::unique_lock lock(race->mu);
  for (;;) {
    if (race->Winner() >= 0 || (race->result[0] && (!hedged || race->result[1]))) break;
    if (opts.cancelled()) {
      race->cancel[0]->store(true);
      race->cancel[1]->store(true);
      failures_.fetch_add(1, std::memory_order_relaxed);
      return MakeError(Errc::kShuttingDown, "get " + race->path + ": cancelled");
    }
    if (!hedge_decided && Steady::now() >= hedge_at) {
      hedge_decided = true;
      CallOptions second = opts;
      if (!race->first_node.empty() &&
          std::find(second.avoid_nodes.begin(), second.avoid_nodes.end(), race->first_node) ==
              second.avoid_nodes.end()) {
        second.avoid_nodes.push_back(race->first_node);
      }
      lock.unlock();
      bool room;
      {
        std::lock_guard t(tracker_->mu);
        room = tracker_->running < opts_.max_background_reads;
      }
      hedged = room && TakeHedgeToken() && Launch(race, 1, std::move(second));
      (hedged ? fired_ : skipped_).fetch_add(1, std::memory_order_relaxed);
      lock.lock();
      continue;
    }
    // Wake for the hedge point, or every 20 ms to notice the caller cancelling.
    auto wake = Steady::now() + std::chrono::milliseconds(20);
    if (!hedge_decided) wake = std::min(wake, hedge_at);
    race->cv.wait_until(lock, wake);
  }
  int w = race->Winner();
  if (w < 0) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    return std::move(*race->result[0]);  // both failed (or no hedge): the first read's error
  }
  race->cancel[1 - w]->store(true);  // the loser stops as soon as it can; its result is dropped
  if (w == 1) won_.fetch_add(1, std::memory_order_relaxed);
  return std::move(*race->result[w]);
}

}  // namespace strata::tiered
