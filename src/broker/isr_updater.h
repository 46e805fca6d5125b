#pragma once
// IsrUpdater: the leader's half of Kafka's AlterPartition. On its own thread,
// every replica.lag.time.max.ms / 2 (at most 500 ms apart), it asks each
// partition this broker leads which ISR and which set of replicas not
// contiguous with remote storage it wants now (followers that caught up in,
// followers that lag out), and writes a change to the partition record by
// compare-and-set. The record comes back through the view; until then the
// high watermark goes by the ISR of the record it has. It also hands ISR
// followers not heard of for a while to the liveness probe, and updates the
// progress of the replicas reassignments add.
//
// Thread-safety: Start/Stop from the owner; UpdateOnce from one thread at a
// time (the updater's own, or a test's before Start).
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "broker/partition.h"
#include "broker/peer_liveness.h"
#include "broker/reassignment_progress.h"
#include "cluster/metadata.h"
#include "config/broker_config.h"

namespace strata::broker {

class IsrUpdater {
 public:
  // What the updater reads and tells of the partitions hosted here
  // (TopicManager).
  class Host {
   public:
    virtual ~Host() = default;
    // The partitions this broker leads now.
    virtual std::vector<std::shared_ptr<Partition>> LedPartitions() const = 0;
    virtual int MinInsyncReplicas(const std::string& topic) const = 0;
    // The highest local log start at which a replica of `p` joins up with
    // remote storage; Offset::Max() for a partition that is not tiered.
    virtual Offset ContiguityBound(const Partition& p) const = 0;
    // After an ISR change was written: a smaller ISR may let the high
    // watermark move with no fetch or produce to move it.
    virtual void IsrChanged(Partition& p) = 0;
    // Before each pass (the replication throttles' rates may have changed).
    virtual void BeforePass() = 0;
    // While the broker's lease is known lost it changes no record.
    virtual bool Fenced() const = 0;
  };

  IsrUpdater(Host& host, const config::BrokerConfig& config, cluster::Metadata& metadata,
             Clock* clock, PeerLiveness& peers, ReassignmentProgress& progress);
  ~IsrUpdater() { Stop(); }
  IsrUpdater(const IsrUpdater&) = delete;
  IsrUpdater& operator=(const IsrUpdater&) = delete;

  void Start();
  void Stop();  // joins the thread; idempotent
  // One pass over the led partitions; returns the ISR changes written.
  int UpdateOnce();

  int64_t shrinks() const { return shrinks_.load(); }  // changes that removed a replica
  int64_t expands() const { return expands_.load(); }  // ... that added one

 private:
  void Loop();
  void SuspectSilentFollowers(const std::vector<std::shared_ptr<Partition>>& led, int64_t now_ms);

  Host& host_;
  const config::BrokerConfig& config_;
  cluster::Metadata& metadata_;
  const cluster::NodeId self_;
  Clock* clock_;
  PeerLiveness& peers_;
  ReassignmentProgress& progress_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<int64_t> shrinks_{0};
  std::atomic<int64_t> expands_{0};
};

}  // namespace strata::broker
