// AlterPartitionReassignments (45) and ListPartitionReassignments (46), as
// kafka-reassign-partitions uses them. Alter runs on the active controller
// (other brokers forward it): a list of replicas starts (or replaces) a
// partition's reassignment, null cancels it; the controller completes it
// once the ISR holds the target (cluster/partition_reassignment.h). List is
// answered from any broker's view: the partitions whose record shows a
// reassignment in progress, with their adding and removing replicas.
#include <set>

#include "broker/error_mapping.h"
#include "broker/handlers/handlers.h"
#include "broker/log.h"
#include "cluster/controller.h"
#include "cluster/metadata.h"
#include "protocol/error_code.h"
#include "protocol/messages/alter_partition_reassignments.h"
#include "protocol/messages/list_partition_reassignments.h"

namespace strata::broker {

namespace {

using protocol::AlterPartitionReassignmentsRequest;
using protocol::AlterPartitionReassignmentsResponse;
using protocol::ErrorCode;
using protocol::ListPartitionReassignmentsRequest;
using protocol::ListPartitionReassignmentsResponse;

std::vector<int32_t> ToWire(const std::vector<cluster::NodeId>& ids) {
  std::vector<int32_t> out;
  for (cluster::NodeId id : ids) out.push_back(id.value());
  return out;
}

std::string Join(const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

// A target's brokers must be registered (live or fenced), as Kafka checks
// them against its broker registrations.
std::optional<std::string> UnknownBroker(cluster::Metadata& md,
                                         const std::vector<int32_t>& replicas) {
  std::set<int32_t> known;
  for (const auto& b : md.view().Brokers()) known.insert(b.registration.node_id.value());
  for (const auto& kv : md.view().RawPrefix(md.keys().KnownBrokersPrefix())) {
    if (auto b = cluster::DecodeBroker(kv.value); b.ok()) known.insert(b->node_id.value());
  }
  for (int32_t id : replicas) {
    if (!known.contains(id)) return "broker " + std::to_string(id) + " is not registered";
  }
  return std::nullopt;
}

AlterPartitionReassignmentsResponse::PartitionResult AlterOne(
    BrokerContext& ctx, const std::string& topic, int32_t partition,
    const std::optional<std::vector<int32_t>>& replicas, bool allow_rf_change) {
  AlterPartitionReassignmentsResponse::PartitionResult out;
  out.partition_index = partition;
  auto fail = [&](ErrorCode code, std::string message) {
    out.error_code = Code(code);
    out.error_message = std::move(message);
    return out;
  };
  cluster::Metadata& md = *ctx.metadata;
  auto t = md.view().Topic(topic);
  if (!t || partition < 0 || partition >= t->record.partitions) {
    return fail(ErrorCode::kUnknownTopicOrPartition, "The partition does not exist.");
  }
  const std::string id = cluster::UuidToBase64(t->record.id);
  std::optional<std::vector<cluster::NodeId>> target;
  if (replicas) {
    if (auto unknown = UnknownBroker(md, *replicas)) {
      return fail(ErrorCode::kInvalidReplicaAssignment, *unknown);
    }
    auto current = md.view().Partition(id, partition);
    if (!allow_rf_change && current &&
        replicas->size() != cluster::OriginalReplicas(current->record).size()) {
      return fail(ErrorCode::kInvalidReplicationFactor,
                  "the reassignment would change the replication factor");
    }
    target.emplace();
    for (int32_t r : *replicas) target->emplace_back(r);
  }
  auto changed = md.AlterReassignment(id, partition, target);
  if (!changed.ok()) {
    return fail(changed.error().code == Errc::kNotFound ? ErrorCode::kUnknownTopicOrPartition
                                                        : TopicWriteErrorCode(changed.error().code),
                changed.error().message);
  }
  switch (changed->error) {
    case cluster::ReassignmentError::kNone:
      break;
    case cluster::ReassignmentError::kNoReassignmentInProgress:
      return fail(ErrorCode::kNoReassignmentInProgress, changed->message);
    case cluster::ReassignmentError::kInvalidReplicaAssignment:
      return fail(ErrorCode::kInvalidReplicaAssignment, changed->message);
  }
  Log()->info("{}-{}: reassignment {}: replicas [{}], adding [{}], removing [{}]", topic, partition,
              replicas ? "to [" + Join(*replicas) + "]" : std::string("cancelled"),
              Join(ToWire(changed->record.replicas)), Join(ToWire(changed->record.adding)),
              Join(ToWire(changed->record.removing)));
  return out;
}

}  // namespace

HandlerResult HandleAlterPartitionReassignments(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(AlterPartitionReassignmentsRequest req,
                          DecodeRequest<AlterPartitionReassignmentsRequest>(request));
  AlterPartitionReassignmentsResponse resp;
  resp.allow_replication_factor_change = req.allow_replication_factor_change;
  const bool controller = ctx.controller != nullptr && ctx.controller->active();
  for (const auto& t : req.topics) {
    auto& topic = resp.responses.emplace_back();
    topic.name = t.name;
    for (const auto& p : t.partitions) {
      if (!controller || ctx.metadata == nullptr) {
        topic.partitions.push_back(
            {p.partition_index, Code(ErrorCode::kNotController), "not the active controller"});
        continue;
      }
      topic.partitions.push_back(AlterOne(ctx, t.name, p.partition_index, p.replicas,
                                          req.allow_replication_factor_change));
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult HandleListPartitionReassignments(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(ListPartitionReassignmentsRequest req,
                          DecodeRequest<ListPartitionReassignmentsRequest>(request));
  ListPartitionReassignmentsResponse resp;
  if (ctx.metadata == nullptr) return std::optional<Bytes>(EncodeResponse(request, resp));
  cluster::MetadataView& view = ctx.metadata->view();
  auto add = [&](const std::string& name, const std::optional<std::vector<int32_t>>& only) {
    auto t = view.Topic(name);
    if (!t) return;  // as Kafka: unknown topics are left out
    ListPartitionReassignmentsResponse::Topic out;
    out.name = name;
    for (const auto& [p, entry] : view.Partitions(cluster::UuidToBase64(t->record.id))) {
      if (only && std::find(only->begin(), only->end(), p) == only->end()) continue;
      if (!cluster::Reassigning(entry.record)) continue;
      out.partitions.push_back({p, ToWire(entry.record.replicas), ToWire(entry.record.adding),
                                ToWire(entry.record.removing)});
    }
    if (!out.partitions.empty()) resp.topics.push_back(std::move(out));
  };
  if (req.topics) {
    for (const auto& t : *req.topics) add(t.name, t.partition_indexes);
  } else {
    for (const auto& t : view.Topics()) add(t.record.name, std::nullopt);
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::broker
