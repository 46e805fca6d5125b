#pragma once
// Executor: carries out a plan's moves as partition reassignments, the way
// an operator would with kafka-reassign-partitions, through the
// controller's own reassignment path (so the fast-migration rules apply:
// new replicas start at the active segment, join the ISR only once
// contiguous with remote storage, old ones leave after). Leadership goes
// where the plan put it with a preferred election once the replicas are
// in place (the plan lists the new leader first).
//
// With a replication throttle, the replica moves are throttled as
// kafka-reassign-partitions --throttle does it: the rate on every broker
// they touch, the moved partitions' replicas in the topics'
// *.replication.throttled.replicas, set before the first move starts and
// taken off once the last ends (only what the executor set itself: an
// operator's own throttles stay as they are).
//
// Moves run in waves: at most `per_broker_concurrency` at once touching any
// one live broker (a dead broker's replicas, re-placed by self-healing, are
// all moved off it at the pace of the brokers that take them). Each must
// finish within `move_timeout_ms`, or it is cancelled (the original
// replicas come back) and counted as failed; a failed start is skipped. A
// move onto a broker that is not registered is skipped, and one running
// when a broker it moves onto leaves is cancelled: it could only time out.
// Between waves `should_stop` is asked (pause, lost controllership, a
// broker gone since the plan was made): moves already started finish,
// nothing new starts.
//
// Thread-safety: one Execute at a time, on the caller's thread, which it
// blocks until done.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "balancer/model_builder.h"
#include "balancer/planner.h"
#include "base/result.h"

namespace strata::balancer {

// What the executor needs of the cluster.
class ReassignmentPort {
 public:
  virtual ~ReassignmentPort() = default;
  virtual Status Reassign(const std::string& topic, int32_t partition,
                          const std::vector<NodeId>& replicas) = 0;
  virtual Status Cancel(const std::string& topic, int32_t partition) = 0;
  // The partition as the metadata shows it now; nullopt: gone.
  virtual std::optional<PartitionTopology> State(const std::string& topic, int32_t partition) = 0;
  virtual Status ElectPreferred(const std::string& topic, int32_t partition) = 0;
  // Throttles the replication of `moves` to `bytes_per_sec` (see above);
  // Unthrottle takes off what Throttle set.
  virtual Status Throttle(const std::vector<Move>& moves, int64_t bytes_per_sec) = 0;
  virtual Status Unthrottle() = 0;
  // Whether `id` is registered now. A gone broker copies and serves
  // nothing, so moves off it do not count against its concurrency.
  virtual bool Live(NodeId id) = 0;
  virtual int64_t NowMs() = 0;
  virtual void Sleep(std::chrono::milliseconds d) = 0;
};

struct ExecutorOptions {
  int per_broker_concurrency = 20;
  int64_t move_timeout_ms = 300'000;
  int64_t throttle_bytes_per_sec = 0;  // 0: replication is not throttled
  std::chrono::milliseconds poll_interval{200};
};

struct MoveOutcome {
  Move move;
  enum class Result { kDone, kFailed, kCancelled, kSkipped } result = Result::kDone;
  std::string detail;
  int64_t duration_ms = 0;
};
const char* MoveResultName(MoveOutcome::Result r);

class Executor {
 public:
  explicit Executor(ExecutorOptions options) : options_(options) {}

  std::vector<MoveOutcome> Execute(const std::vector<Move>& moves, ReassignmentPort& port,
                                   const std::function<bool()>& should_stop,
                                   const std::function<bool()>& abandon,
                                   const std::function<void(const MoveOutcome&)>& on_outcome);

 private:
  struct Running {
    size_t index;
    int64_t started_ms;
  };
  bool Finished(const Move& move, ReassignmentPort& port, std::string* detail);

  const ExecutorOptions options_;
};

}  // namespace strata::balancer
