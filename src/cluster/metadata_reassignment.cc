// Metadata's writes of partition reassignments (AlterPartitionReassignments):
// started and cancelled by the active controller under its fence; completed
// by the controller's pass (Controller::ElectLeaders) once the ISR holds the
// target.
#include "cluster/logger.h"
#include "cluster/metadata.h"

namespace strata::cluster {

Result<ReassignmentChange> Metadata::AlterReassignment(
    const std::string& topic_id, int32_t partition,
    const std::optional<std::vector<NodeId>>& target) {
  const std::string key = keys_.Partition(topic_id, partition);
  for (int attempt = 0; attempt < 16; ++attempt) {
    auto entry = view_->Partition(topic_id, partition);
    if (!entry) {
      return MakeError(Errc::kNotFound, "partition " + std::to_string(partition) + " of topic id " +
                                            topic_id + " does not exist");
    }
    ReassignmentChange change =
        target ? StartReassignment(entry->record, *target) : CancelReassignment(entry->record);
    if (change.error != ReassignmentError::kNone) return change;
    std::vector<KvCompare> guards = {KvCompare::ModRevisionIs(key, entry->mod_revision)};
    STRATA_RETURN_IF_ERROR(AddControllerFence(guards));
    KvOp put = KvOp::Put(key, EncodePartition(change.record));
    STRATA_ASSIGN_OR_RETURN(TxnResult r, Commit(guards, std::span(&put, 1)));
    if (r.succeeded) return change;
    STRATA_RETURN_IF_ERROR(CheckControllerFence(guards));
    // The record changed meanwhile (an ISR change, an election): decide again
    // on the one the store has now.
    STRATA_ASSIGN_OR_RETURN(RangeResult got, kv_->Get(key));
    if (got.kvs.empty()) return MakeError(Errc::kNotFound, "partition deleted meanwhile");
    view_->WaitForRevision(got.kvs[0].mod_revision, options_.timeout);
  }
  return MakeError(Errc::kUnavailable, "the partition record kept changing; retry");
}

}  // namespace strata::cluster
