#pragma once
// Controller: what the active controller does as brokers come and go. While
// this broker's ControllerElection is active, it watches broker
// registrations and partition records and re-elects leaders
// (ElectLeader): a partition whose leader's registration is gone, or was
// made again, gets a live ISR member as leader, or none (leader -1) until
// one returns, or, where the topic allows unclean election, the first live
// replica. With auto.leader.rebalance.enable it also gives leadership back
// to preferred replicas (PartitionsToRebalance) every
// leader.imbalance.check.interval.seconds. Every write is guarded by the election fence and the
// record's mod revision, so a deposed controller writes nothing and a record
// changed meanwhile is decided again on its new value.
//
// Thread-safety: one thread of its own; constructed and destroyed by the
// broker.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/controller_election.h"
#include "cluster/metadata.h"
#include "cluster/partition_leadership.h"
#include "cluster/view_change_signal.h"

namespace strata::cluster {

struct ElectionTarget {
  std::string topic;
  int32_t partition = 0;
};
struct ElectionResult {
  ElectionTarget target;
  ElectionOutcome outcome = ElectionOutcome::kNotNeeded;
  bool unknown = false;  // no such topic or partition
};

struct ControllerOptions {
  // Whether a topic allows unclean election (its
  // unclean.leader.election.enable, else the broker default); none: never.
  std::function<bool(const TopicRecord&)> unclean_allowed;
  // The topic's min.insync.replicas (else the broker default), which keeps
  // its eligible leader replicas (KIP-966); none: no ELR.
  std::function<int(const TopicRecord&)> min_insync_replicas;
  // auto.leader.rebalance.enable, leader.imbalance.check.interval.seconds,
  // leader.imbalance.per.broker.percentage.
  bool auto_leader_rebalance = false;
  std::chrono::milliseconds leader_imbalance_check_interval{300'000};
  int leader_imbalance_percent = 10;
};

class Controller {
 public:
  Controller(Metadata& metadata, ControllerElection& election, ControllerOptions options);
  ~Controller();

  // The elections an operator asks for (ElectLeaders), run now on the
  // calling thread: for `partitions`, or (nullopt) every partition where one
  // would change the leader. kFenced when this broker is not the controller.
  Result<std::vector<ElectionResult>> RunElections(
      ElectionType type, const std::optional<std::vector<ElectionTarget>>& partitions);

  // Leadership changes written so far (for tests and metrics).
  int64_t leader_changes() const { return leader_changes_.load(); }
  // Passes over every partition made as the active controller (each one
  // ends with its writes applied to this broker's view).
  int64_t passes() const { return passes_.load(); }
  // Whether this broker is the active controller now.
  bool active() const { return election_.active(); }
  // Partitions with no leader, or one whose registration is gone (Kafka's
  // OfflinePartitionsCount), from the metadata view.
  int64_t OfflinePartitions() const;

 private:
  void Run();
  // One pass over every partition; true when all its writes went through.
  bool ElectLeaders();
  // Registered brokers whose log directory was new, with the revision
  // (LostDataBefore) below which partition records count on data they lack.
  std::map<NodeId, Revision> NewLogDirs() const;
  // ForgetLostReplica for each broker in `new_dirs` (whose log directory
  // was new, with LostDataBefore) whose lost data `entry` still counts on
  // (CountsOnLostData); applied to `record`, marked there as forgotten.
  // True when it changed.
  static bool ForgetLostReplicas(const std::string& topic, int32_t partition,
                                 const PartitionEntry& entry,
                                 const std::map<NodeId, Revision>& new_dirs, bool tiered,
                                 PartitionRecord& record);
  // At the start of a term: deletes partition records whose topic record was
  // never written (a creation cut short by a controller crash or fence).
  void DeleteUnfinishedCreations();
  // Preferred elections for the brokers above the imbalance percentage.
  void BalanceLeaders();

  Metadata& metadata_;
  ControllerElection& election_;
  const ControllerOptions options_;
  std::atomic<int64_t> leader_changes_{0};
  std::atomic<int64_t> passes_{0};
  // The broker epochs seen by the last pass as this controller: a different
  // one now means the broker registered again.
  std::map<NodeId, BrokerEpoch> known_epochs_;
  bool was_active_ = false;
  std::chrono::steady_clock::time_point next_balance_;
  ViewChangeSignal signal_;  // broker registrations, partitions, the controller key
  std::thread thread_;
};

}  // namespace strata::cluster
