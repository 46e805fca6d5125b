// Which __consumer_offsets partitions this coordinator serves: the broker
// loads a partition when it starts leading it and unloads it when the
// leadership goes (Kafka's onElection / onResignation).
#include <fmt/format.h>

#include "coordinator/group_coordinator.h"
#include "coordinator/key_partitioner.h"
#include "coordinator/logger.h"

namespace strata::coordinator {

using protocol::ErrorCode;

void GroupCoordinator::UnloadPartition(int32_t p) {
  if (p < 0 || p >= log_->partitions()) return;
  std::lock_guard serial(residency_mu_);
  {
    std::lock_guard lock(deferred_mu_);
    deferred_ends_.erase(p);
    residency_[size_t(p)] = Residency::kAbsent;
  }
  std::vector<std::shared_ptr<ClassicGroup>> leaving;
  {
    std::lock_guard lock(map_mu_);
    for (auto it = groups_.begin(); it != groups_.end();) {
      if (PartitionForKey(it->first, log_->partitions()) == p) {
        leaving.push_back(std::move(it->second));
        it = groups_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& shared : leaving) {
    LockedGroup g(shared);
    for (auto& [id, member] : g->mutable_members()) {
      protocol::JoinGroupResponse join;
      join.error_code = Code(ErrorCode::kNotCoordinator);
      join.member_id = id;
      g->CompleteJoin(member, std::move(join));
      protocol::SyncGroupResponse sync;
      sync.error_code = Code(ErrorCode::kNotCoordinator);
      g->CompleteSync(member, std::move(sync));
    }
    g->TransitionTo(GroupState::kDead, WallNow());
  }
  if (!leaving.empty()) {
    Log()->info("{}-{} left this broker: {} groups unloaded", kOffsetsTopic, p, leaving.size());
  }
}

ErrorCode GroupCoordinator::Serves(const std::string& group_id) const {
  switch (residency_[size_t(PartitionFor(group_id))].load()) {
    case Residency::kLoaded:
      return ErrorCode::kNone;
    case Residency::kLoading:
      return ErrorCode::kCoordinatorLoadInProgress;
    case Residency::kAbsent:
      return ErrorCode::kNotCoordinator;
  }
  return ErrorCode::kNotCoordinator;
}

}  // namespace strata::coordinator
