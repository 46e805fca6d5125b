// GroupCoordinator, KIP-848's side: ConsumerGroupHeartbeat and
// ConsumerGroupDescribe on the group table, the consumer groups' timers, and
// how their records are written and applied.
#include <fmt/format.h>

#include <random>

#include "base/log.h"
#include "coordinator/group_coordinator.h"
#include "coordinator/group_records.h"
#include "coordinator/logger.h"

namespace strata::coordinator {

namespace {

using protocol::ErrorCode;

protocol::ConsumerGroupHeartbeatResponse HeartbeatError(ErrorCode code, std::string message) {
  protocol::ConsumerGroupHeartbeatResponse r;
  r.error_code = Code(code);
  if (!message.empty()) r.error_message = std::move(message);
  return r;
}

// A member id the coordinator makes (version 0 joins): 128 random bits.
std::string NewMemberId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{:016x}{:016x}", rng(), rng());
}

}  // namespace

Status GroupCoordinator::PersistConsumer(ClassicGroup& g,
                                         const std::vector<ConsumerGroupRecord>& records,
                                         std::vector<CoordinatorRecord> extra) {
  if (records.empty() && extra.empty()) return Status::Ok();
  for (const auto& r : records) extra.push_back(EncodeConsumerGroupRecord(r));
  STRATA_RETURN_IF_ERROR(Persist(g, extra));
  for (const auto& r : records) {
    Status st = g.consumer->Replay(r);
    if (!st.ok()) {
      // Written but not applicable: the state and the log disagree. The
      // partition's next load rebuilds the group from the log.
      Log()->error("group {}: {}", g.group_id(), st.error().message);
      return st;
    }
  }
  g.RefreshNextDeadline();
  return Status::Ok();
}

protocol::ConsumerGroupHeartbeatResponse GroupCoordinator::ConsumerGroupHeartbeat(
    const RequestContext& ctx, const protocol::ConsumerGroupHeartbeatRequest& req) {
  std::string message;
  ErrorCode invalid = ValidateHeartbeat(req, ctx.api_version, config_.consumer, &message);
  if (invalid != ErrorCode::kNone) return HeartbeatError(invalid, message);
  protocol::ConsumerGroupHeartbeatRequest request = req;
  if (request.member_id.empty()) {
    // Version 0: the coordinator names a joining member.
    request.member_id = NewMemberId();
  }
  const bool join = request.member_epoch == 0;
  bool created = false;
  LockedGroup g = Acquire(request.group_id, /*create=*/join, &created);
  if (!g) {
    return HeartbeatError(ErrorCode::kGroupIdNotFound,
                          fmt::format("Consumer group {} not found.", request.group_id));
  }
  std::vector<CoordinatorRecord> classic_tombstone;
  bool converted = false;
  if (!g->IsConsumerGroup()) {
    // An empty classic group (or one that only holds offsets) becomes a
    // consumer group at the first join; one with members does not.
    if (!join || g->num_members() > 0) {
      return HeartbeatError(ErrorCode::kGroupIdNotFound,
                            fmt::format("Group {} is not a consumer group.", request.group_id));
    }
    g->consumer = std::make_unique<ConsumerGroup>(request.group_id);
    converted = true;
    if (g->protocol_type())
      classic_tombstone.push_back({EncodeGroupMetadataKey(g->group_id()), {}});
  }
  g->consumer->ExpireRegexMatches(Now());
  const int32_t epoch_before = g->consumer->group_epoch();
  ConsumerGroupChange change =
      request.member_epoch < 0 ? g->consumer->Leave(request, catalog_)
                               : g->consumer->Heartbeat(request, ctx, catalog_, config_.consumer);
  if (change.response.error_code == 0) {
    Status st = PersistConsumer(*g, change.records, std::move(classic_tombstone));
    if (!st.ok()) {
      Log()->warn("group {}: heartbeat of {} not stored: {}", request.group_id, request.member_id,
                  st.error().message);
      change.response = HeartbeatError(ErrorCode::kCoordinatorNotAvailable, "");
    } else {
      if (request.member_epoch >= 0) {
        g->consumer->ArmTimers(request.member_id, Now(), config_.consumer);
        g->RefreshNextDeadline();
      }
      if (g->consumer->group_epoch() != epoch_before) {
        Log()->info("group {}: epoch {} -> {} on a heartbeat of {} (epoch {}), {} members",
                    request.group_id, epoch_before, g->consumer->group_epoch(), request.member_id,
                    request.member_epoch, g->consumer->members().size());
      }
    }
  }
  if (g->consumer->group_epoch() == 0 && g->consumer->members().empty()) {
    // Nothing of the consumer group was written (a refused first join).
    if (created) {
      g->TransitionTo(GroupState::kDead, WallNow());
      Unlink(g.shared());
    } else if (converted) {
      g->consumer.reset();
    }
  }
  return change.response;
}

void GroupCoordinator::RunConsumerTimers(ClassicGroup& g, int64_t now_ms) {
  std::vector<std::string> expired = g.consumer->Expired(now_ms);
  if (expired.empty()) {
    g.RefreshNextDeadline();
    return;
  }
  g.consumer->ExpireRegexMatches(now_ms);
  Status st = PersistConsumer(g, g.consumer->Fence(expired, catalog_));
  if (!st.ok()) {
    Log()->warn("group {}: fencing {} timed-out members not stored: {}", g.group_id(),
                expired.size(), st.error().message);
    return;
  }
  Log()->info("group {}: fenced {} (session or rebalance timeout), group epoch {}", g.group_id(),
              fmt::join(expired, ", "), g.consumer->group_epoch());
}

protocol::ConsumerGroupDescribeResponse::Group GroupCoordinator::DescribeConsumerGroup(
    const std::string& group_id) {
  LockedGroup g = Acquire(group_id, false);
  if (!g || !g->IsConsumerGroup()) {
    protocol::ConsumerGroupDescribeResponse::Group out;
    out.group_id = group_id;
    out.error_code = Code(ErrorCode::kGroupIdNotFound);
    out.error_message = g ? fmt::format("Group {} is not a consumer group.", group_id)
                          : fmt::format("Group {} not found.", group_id);
    return out;
  }
  return g->consumer->Describe(catalog_, config_.consumer);
}

}  // namespace strata::coordinator
