#pragma once
// The records of cluster metadata, as stored under the keys of KeyLayout
// (docs/metadata.md lists both). Values are JSON so an operator can read them
// with etcdctl; each decoder checks every field and says which one is wrong.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "cluster/metadata_store.h"
#include "cluster/types.h"

namespace strata::cluster {

// kShuttingDown: the broker got SIGTERM and asks the controller to move its
// leaderships and ISR memberships away before it stops (controlled shutdown).
enum class BrokerState { kActive, kStandby, kDraining, kFenced, kShuttingDown };
const char* BrokerStateName(BrokerState s);
// A broker the controller may make leader or keep in an ISR: registered and
// neither fenced nor shutting down.
bool EligibleForLeadership(BrokerState s);

struct BrokerListener {
  std::string name;  // listener name (PLAINTEXT)
  std::string host;
  int32_t port = 0;
  bool operator==(const BrokerListener&) const = default;
};

// A live broker: written with the broker's lease, so it goes when the broker
// stops renewing. The broker epoch is the key's create revision.
// The dimensions of BrokerRegistration::capacity.
inline constexpr const char* kCapacityNetworkIn = "network_in_bytes_per_sec";
inline constexpr const char* kCapacityNetworkOut = "network_out_bytes_per_sec";
inline constexpr const char* kCapacityDisk = "disk_bytes";
inline constexpr const char* kCapacityCpu = "cpu_cores";

struct BrokerRegistration {
  NodeId node_id{-1};
  std::vector<BrokerListener> listeners;
  // Which of `listeners` other brokers reach it on (inter.broker.listener.name).
  std::string inter_broker_listener;
  std::string rack;  // empty: none
  BrokerState state = BrokerState::kActive;
  // strata.broker.capacity.*, for the balancer: the kCapacity* keys below;
  // a dimension the broker did not declare is absent.
  std::map<std::string, int64_t> capacity;
  std::string incarnation;  // random per process start, tells restarts apart
  // The broker's previous run ended in a clean shutdown (or there was none):
  // nothing it acknowledged can be missing from its logs. After a crash
  // unflushed records may be, so it leaves the eligible leader replicas.
  bool clean_shutdown = true;
  // The broker's log directory was new (a replaced or wiped disk, or a
  // first start) when it registered at this broker epoch (0: at this
  // registration; -1: it was not new): partition records older than that
  // epoch which count on its replicas count on data it does not have
  // (Controller::ForgetLostReplicas). Kept until no such record is left.
  int64_t new_log_dir_epoch = -1;
  // On the known-broker record only: the broker left by a clean shutdown
  // (it revoked its own lease) and is expected back, as in a rolling
  // restart; the balancer waits longer before re-placing its replicas than
  // for one that vanished. A new registration clears it.
  bool left_cleanly = false;
  bool operator==(const BrokerRegistration&) const = default;
};
// The listener of `r` named `name`, or nullptr.
const BrokerListener* FindListener(const BrokerRegistration& r, std::string_view name);
// Where other brokers reach `r`: its inter-broker listener (the first one
// for a registration that names none), or nullptr when it has no listener.
const BrokerListener* InterBrokerEndpoint(const BrokerRegistration& r);

// The (store) revision below which partition records may count on data the
// broker registered at `epoch` with `r` does not have (new_log_dir_epoch
// resolved), or 0 when its log directory was not new.
int64_t LostDataBefore(const BrokerRegistration& r, BrokerEpoch epoch);

// One partition's placement and leadership, changed only by compare-and-set
// on its revision; partition_epoch grows with every change.
struct PartitionRecord {
  std::vector<NodeId> replicas;
  std::vector<NodeId> isr;
  NodeId leader{-1};  // -1: offline
  LeaderEpoch leader_epoch{0};
  PartitionEpoch partition_epoch{0};
  // KIP-966 eligible leader replicas: replicas that left the ISR while it
  // was below min.insync.replicas (UpdateEligibleLeaders); last_known_elr
  // is kept empty (Kafka fills it when the ISR becomes empty, which the
  // ISR here never does).
  std::vector<NodeId> elr;
  std::vector<NodeId> last_known_elr;
  // An ongoing reassignment (Kafka's adding/removing replicas).
  std::vector<NodeId> adding;
  std::vector<NodeId> removing;
  // Replicas whose local log does not join up with remote storage (tiered
  // storage): their local log start is above the shared remote log end + 1
  // (and above the partition's log start), so offsets between are held by
  // neither. They may not join the ISR nor be elected, clean or unclean.
  // A replica added by a reassignment starts here, and so does one whose
  // broker came back with an empty log directory (ForgetLostReplica); the
  // leader takes it out once the replica's fetches show a log start that
  // remote data reaches (at once for a topic without remote storage).
  std::vector<NodeId> non_contiguous;
  // Replica -> the revision (LostDataBefore) of its broker's empty-log-
  // directory registration that this record has already forgotten
  // (ForgetLostReplica). Whatever the record says of that replica afterwards
  // (the leader taking its rebuilt log back into the ISR) is about the new
  // log; a record without the mark, even one written after the
  // registration, may still carry ISR membership from before the wipe.
  std::map<NodeId, int64_t> forgot_lost_data;
  bool operator==(const PartitionRecord&) const = default;
};

// What a partition's leader changes in its record (Metadata::AlterPartition).
struct PartitionStateChange {
  std::vector<NodeId> isr;
  std::vector<NodeId> non_contiguous;  // PartitionRecord::non_contiguous
  // KIP-903: the broker epoch (registration) each replica joining the ISR
  // fetched under. A join from an earlier registration is refused; one by
  // a broker registered with a new log directory is made with its rebuilt
  // log, and marks the record so (PartitionRecord::forgot_lost_data). A
  // joining replica without an epoch here joins unmarked.
  std::map<NodeId, int64_t> joining_epochs;
  bool operator==(const PartitionStateChange&) const = default;
};

// Whether the topic's records go to remote storage (its
// remote.storage.enable override; Kafka has no broker-wide default for it).
bool RemoteStorageEnabled(const TopicRecord& t);

// Whether `id` may be in the ISR or lead as far as remote contiguity goes.
bool RemoteContiguous(const PartitionRecord& p, NodeId id);

// "1,2,3": node ids as logs print them.
std::string JoinIds(const std::vector<NodeId>& ids);

std::string EncodeBroker(const BrokerRegistration& b);
Result<BrokerRegistration> DecodeBroker(const std::string& value);
std::string EncodePartition(const PartitionRecord& p);
Result<PartitionRecord> DecodePartition(const std::string& value);
std::string EncodeTopic(const TopicRecord& t);
Result<TopicRecord> DecodeTopic(const std::string& value);
// Dynamic broker configs (configs/brokers/<entity>): a JSON object of strings.
std::string EncodeConfigs(const std::map<std::string, std::string>& configs);
Result<std::map<std::string, std::string>> DecodeConfigs(const std::string& value);
std::string EncodeRemoteLogOffsets(const RemoteLogOffsets& o);
Result<RemoteLogOffsets> DecodeRemoteLogOffsets(const std::string& value);

// Kafka's base64 text form of a topic id, back to bytes.
std::optional<TopicId> TopicIdFromBase64(const std::string& text);

}  // namespace strata::cluster
