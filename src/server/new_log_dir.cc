// Broker::SettleNewLogDir: the broker's half of replacing a disk. A broker
// whose log directory was new registers saying so, with the epoch it was new
// at; the controller takes its replicas out of every ISR, ELR and leadership
// written before then (Controller::ForgetLostReplicas). Until the broker sees
// that done it keeps the directory's marker, so a crash in between makes the
// next start say so again; records marked as having forgotten it, and
// partitions made since, stay trusted.
#include "broker/local_replicas.h"
#include "cluster/partition_leadership.h"
#include "server/broker.h"
#include "server/logger.h"

namespace strata::server {

namespace {

// Partitions whose record still counts on the data this broker's replica
// had before revision `before` (what the controller is to change).
int PartitionsCountingOnLostData(const cluster::MetadataView& view, cluster::NodeId self,
                                 cluster::Revision before) {
  int out = 0;
  for (const auto& topic : view.Topics()) {
    const bool tiered = cluster::RemoteStorageEnabled(topic.record);
    for (const auto& [p, entry] : view.Partitions(cluster::UuidToBase64(topic.record.id))) {
      if (cluster::CountsOnLostData(entry.record, entry.create_revision, self, before, tiered))
        out++;
    }
  }
  return out;
}

}  // namespace

void Broker::SettleNewLogDir() {
  if (new_log_dir_epoch_ <= 0 || !session_) return;
  cluster::MetadataView& view = metadata_->view();
  if (view.revision() < new_log_dir_epoch_) return;
  const int waiting = PartitionsCountingOnLostData(view, session_->node(), new_log_dir_epoch_);
  if (waiting > 0) {
    Log()->debug(
        "new log directory: waiting for the controller to take this broker's replicas "
        "out of {} partitions' ISRs and leaderships",
        waiting);
    return;
  }
  Status st = broker::ClearNewLogDirMarker(config_.log_dir());
  if (!st.ok()) {
    Log()->warn("{}", st.error().message);
    return;
  }
  session_->SetNewLogDirEpoch(-1);
  topics_->SetLostDataBefore(0);
  new_log_dir_epoch_ = -1;
  Log()->info("new log directory: no partition counts on data this broker had before");
}

}  // namespace strata::server
