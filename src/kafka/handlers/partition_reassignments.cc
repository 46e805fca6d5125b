// AlterPartitionReassignments (45) and ListPartitionReassignments (46), as
// kafka-reassign-partitions uses them. Alter runs on the active controller
// (other brokers forward it): a list of replicas starts (or replaces) a
// partition's reassignment, null cancels it; the controller completes it
// once the ISR holds the target (cluster/partition_reassignment.h). List is
// answered from any broker's view: the partitions whose record shows a
// reassignment in progress, with their adding and removing replicas.
#include <set>

#include "cluster/controller.h"
#include "cluster/metadata.h"
#include "kafka/authorization.h"
#include "kafka/error_mapping.h"
#include "kafka/handlers/handlers.h"
#include "kafka/logger.h"
#include "protocol/error_code.h"
#include "protocol/messages/alter_partition_reassignments.h"
#include "protocol/messages/list_partition_reassignments.h"

namespace strata::kafka {

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

// The brokers a target may name: registered ones, live or fenced, as Kafka
// checks a target against its broker registrations.
std::set<int32_t> RegisteredBrokers(cluster::Metadata& md) {
  std::set<int32_t> known;
  for (const auto& b : md.view().Brokers()) known.insert(b.registration.node_id.value());
  for (const auto& b : md.KnownBrokers()) known.insert(b.node_id.value());
  return known;
}

AlterPartitionReassignmentsResponse::PartitionResult AlterOne(
    BrokerContext& ctx, const std::string& topic, int32_t partition,
    const std::optional<std::vector<int32_t>>& replicas, bool allow_rf_change,
    const std::set<int32_t>& registered) {
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
    for (int32_t r : *replicas) {
      if (!registered.contains(r)) {
        return fail(ErrorCode::kInvalidReplicaAssignment,
                    "broker " + std::to_string(r) + " is not registered");
      }
    }
    auto current = md.view().Partition(id, partition);
    if (!allow_rf_change && current &&
        replicas->size() != cluster::OriginalReplicas(current->record).size()) {
      return fail(ErrorCode::kInvalidReplicationFactor,
                  "the reassignment would change the replication factor");
    }
    target.emplace(replicas->begin(), replicas->end());
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
              target ? "to [" + cluster::JoinIds(*target) + "]" : std::string("cancelled"),
              cluster::JoinIds(changed->record.replicas), cluster::JoinIds(changed->record.adding),
              cluster::JoinIds(changed->record.removing));
  return out;
}

}  // namespace

HandlerResult HandleAlterPartitionReassignments(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(AlterPartitionReassignmentsRequest req,
                          DecodeRequest<AlterPartitionReassignmentsRequest>(request));
  if (!AuthorizedOnCluster(ctx, request, security::AclOperation::kAlter)) {
    return AlterPartitionReassignmentsControllerUnavailable(
        request, ErrorCode::kClusterAuthorizationFailed, "Cluster authorization failed.");
  }
  AlterPartitionReassignmentsResponse resp;
  resp.allow_replication_factor_change = req.allow_replication_factor_change;
  const bool controller = ctx.controller != nullptr && ctx.controller->active();
  const std::set<int32_t> registered = controller && ctx.metadata != nullptr
                                           ? RegisteredBrokers(*ctx.metadata)
                                           : std::set<int32_t>{};
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
                                          req.allow_replication_factor_change, registered));
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult HandleListPartitionReassignments(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(ListPartitionReassignmentsRequest req,
                          DecodeRequest<ListPartitionReassignmentsRequest>(request));
  ListPartitionReassignmentsResponse resp;
  if (!AuthorizedOnCluster(ctx, request, security::AclOperation::kDescribe)) {
    resp.error_code = Code(ErrorCode::kClusterAuthorizationFailed);
    resp.error_message = "Cluster authorization failed.";
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
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

HandlerResult AlterPartitionReassignmentsControllerUnavailable(net::Request& request,
                                                               ErrorCode code,
                                                               const std::string& message) {
  STRATA_ASSIGN_OR_RETURN(auto req, DecodeRequest<AlterPartitionReassignmentsRequest>(request));
  AlterPartitionReassignmentsResponse resp;
  resp.allow_replication_factor_change = req.allow_replication_factor_change;
  resp.error_code = Code(code);
  resp.error_message = message;
  for (const auto& t : req.topics) {
    auto& out = resp.responses.emplace_back();
    out.name = t.name;
    for (const auto& p : t.partitions) {
      out.partitions.push_back({p.partition_index, Code(code), message});
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
