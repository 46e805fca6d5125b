// ElectLeaders (43), on the active controller (other brokers forward it):
// preferred or unclean elections for the asked partitions, or for every
// partition that needs one (TopicPartitions null), with Kafka's per-partition
// errors: ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
// ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION.
#include "protocol/messages/elect_leaders.h"

#include <map>

#include "cluster/controller.h"
#include "kafka/authorization.h"
#include "kafka/controller_forwarding.h"
#include "kafka/error_mapping.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"

namespace strata::kafka {

namespace {

using cluster::ElectionOutcome;
using protocol::ElectLeadersRequest;
using protocol::ElectLeadersResponse;
using protocol::ErrorCode;

ElectLeadersResponse::PartitionResult ElectionToWire(const cluster::ElectionResult& r) {
  ElectLeadersResponse::PartitionResult out;
  out.partition_id = r.target.partition;
  if (r.unknown) {
    out.error_code = Code(ErrorCode::kUnknownTopicOrPartition);
    out.error_message = "The partition does not exist.";
    return out;
  }
  switch (r.outcome) {
    case ElectionOutcome::kElected:
      break;
    case ElectionOutcome::kNotNeeded:
      out.error_code = Code(ErrorCode::kElectionNotNeeded);
      out.error_message = "Leader election not needed for topic partition.";
      break;
    case ElectionOutcome::kPreferredNotAvailable:
      out.error_code = Code(ErrorCode::kPreferredLeaderNotAvailable);
      out.error_message = "The preferred leader is not live or not in the ISR.";
      break;
    case ElectionOutcome::kEligibleNotAvailable:
      out.error_code = Code(ErrorCode::kEligibleLeadersNotAvailable);
      out.error_message = "No live replica can lead the partition.";
      break;
  }
  return out;
}

HandlerResult Failed(net::Request& request, const ElectLeadersRequest& req, ErrorCode code,
                     const std::string& message) {
  ElectLeadersResponse resp = ElectLeadersFailed(req, code, message);
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace

HandlerResult HandleElectLeaders(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(ElectLeadersRequest req, DecodeRequest<ElectLeadersRequest>(request));
  const int16_t version = request.header.api_version;
  if (!AuthorizedOnCluster(ctx, request, security::AclOperation::kAlter)) {
    return Failed(request, req, ErrorCode::kClusterAuthorizationFailed,
                  "Cluster authorization failed.");
  }
  if (version >= 1 && req.election_type != 0 && req.election_type != 1) {
    return Failed(request, req, ErrorCode::kInvalidRequest,
                  "Unknown election type " + std::to_string(req.election_type));
  }
  const auto type = version >= 1 ? static_cast<cluster::ElectionType>(req.election_type)
                                 : cluster::ElectionType::kPreferred;
  std::optional<std::vector<cluster::ElectionTarget>> targets;
  if (req.topic_partitions) {
    targets.emplace();
    for (const auto& t : *req.topic_partitions) {
      for (int32_t p : t.partition_ids) targets->push_back({t.topic, p});
    }
  }
  if (ctx.controller == nullptr) {
    return Failed(request, req, ErrorCode::kNotController, "no controller here");
  }
  auto results = ctx.controller->RunElections(type, targets);
  if (!results.ok()) {
    return Failed(request, req, TopicWriteErrorCode(results.error().code), results.error().message);
  }
  ElectLeadersResponse resp;
  std::map<std::string, size_t> by_topic;
  for (const auto& r : *results) {
    auto [it, added] = by_topic.emplace(r.target.topic, resp.replica_election_results.size());
    if (added) resp.replica_election_results.push_back({r.target.topic, {}});
    resp.replica_election_results[it->second].partition_results.push_back(ElectionToWire(r));
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult ElectLeadersControllerUnavailable(net::Request& request, ErrorCode code,
                                                const std::string& message) {
  STRATA_ASSIGN_OR_RETURN(auto req, DecodeRequest<ElectLeadersRequest>(request));
  ElectLeadersResponse resp = ElectLeadersFailed(req, code, message);
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
