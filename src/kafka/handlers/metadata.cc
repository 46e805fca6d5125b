// Metadata (3): the live brokers, cluster id, controller and topics, with
// each partition's leader, epoch, replicas and ISR from its record. Unknown topics are auto-created
// when both the request and auto.create.topics.enable allow it, so they come back usable at once.
#include "protocol/messages/metadata.h"

#include "broker/topic_validation.h"
#include "kafka/authorization.h"
#include "kafka/cluster_state.h"
#include "kafka/controller_forwarding.h"
#include "kafka/handlers/handlers.h"
#include "kafka/topic_creation.h"
#include "protocol/error_code.h"

namespace strata::kafka {

namespace {

using protocol::ErrorCode;
using protocol::MetadataRequest;
using protocol::MetadataResponse;

MetadataResponse::Topic DescribeTopic(BrokerContext& ctx, const broker::TopicInfo& info,
                                      std::string_view listener) {
  MetadataResponse::Topic t;
  t.name = info.record.name;
  t.topic_id = info.record.id;
  t.is_internal = info.record.internal;
  auto states = PartitionStates(ctx, info.record, LiveBrokers(ctx, listener));
  for (int32_t p = 0; p < info.record.partitions; ++p) {
    PartitionState& s = states[static_cast<size_t>(p)];
    MetadataResponse::Partition& part = t.partitions.emplace_back();
    part.partition_index = p;
    part.leader_id = s.leader().value();
    part.leader_epoch = s.record.leader_epoch.value();  // real even without a leader (KIP-320)
    part.replica_nodes = WireIds(s.record.replicas);
    part.isr_nodes = WireIds(s.record.isr);
    part.offline_replicas = WireIds(s.offline_replicas);
    if (!s.leader_available) part.error_code = Code(ErrorCode::kLeaderNotAvailable);
  }
  return t;
}

// Auto-creation needs CREATE on the cluster or on the topic.
bool MayCreate(const BrokerContext& ctx, const net::Request& request, const std::string& name) {
  return AuthorizedOnCluster(ctx, request, security::AclOperation::kCreate, false) ||
         Authorized(ctx, request, security::AclOperation::kCreate, security::ResourceType::kTopic,
                    name);
}

MetadataResponse::Topic LookupOrCreate(BrokerContext& ctx, const net::Request& request,
                                       const std::string& name, bool auto_create) {
  const std::string_view listener = request.listener;
  MetadataResponse::Topic t;
  t.name = name;
  if (!Authorized(ctx, request, security::AclOperation::kDescribe, security::ResourceType::kTopic,
                  name)) {
    t.error_code = Code(ErrorCode::kTopicAuthorizationFailed);
    return t;
  }
  if (auto info = ctx.topics.GetTopicInfo(name)) return DescribeTopic(ctx, *info, listener);
  if (broker::InvalidTopicNameReason(name)) {
    t.error_code = Code(ErrorCode::kInvalidTopicException);
    return t;
  }
  if (!auto_create) {
    t.error_code = Code(ErrorCode::kUnknownTopicOrPartition);
    return t;
  }
  if (!MayCreate(ctx, request, name)) {
    t.error_code = Code(ErrorCode::kTopicAuthorizationFailed);
    return t;
  }
  if (ctx.forwarder != nullptr && !ctx.forwarder->IsActiveController()) {
    // As Kafka's brokers: the controller creates it; the client retries.
    ctx.forwarder->RequestTopicCreation(name);
    t.error_code = Code(ErrorCode::kLeaderNotAvailable);
    return t;
  }
  auto created = CreateTopicChecked(ctx, name, -1, -1, {}, false);
  if (created.error != ErrorCode::kNone && created.error != ErrorCode::kTopicAlreadyExists) {
    t.error_code =
        Code(created.error == ErrorCode::kInvalidReplicationFactor ? ErrorCode::kLeaderNotAvailable
                                                                   : created.error);
    return t;
  }
  if (auto info = ctx.topics.GetTopicInfo(name)) return DescribeTopic(ctx, *info, listener);
  t.error_code = Code(ErrorCode::kLeaderNotAvailable);
  return t;
}

// v8+: what the client may do on each topic it may describe and (v8-10) on
// the cluster, when asked (Kafka: the cluster's only with DESCRIBE on it).
void AddAuthorizedOperations(const BrokerContext& ctx, const net::Request& request,
                             const protocol::MetadataRequest& req, MetadataResponse& resp) {
  const int16_t version = request.header.api_version;
  if (version < 8) return;
  if (version <= 10 && req.include_cluster_authorized_operations) {
    resp.cluster_authorized_operations =
        AuthorizedOnCluster(ctx, request, security::AclOperation::kDescribe, false)
            ? AuthorizedOperations(ctx, request, security::ResourceType::kCluster,
                                   security::kClusterResourceName)
            : 0;
  }
  if (!req.include_topic_authorized_operations) return;
  for (auto& t : resp.topics) {
    if (!t.name || t.error_code == Code(ErrorCode::kTopicAuthorizationFailed)) continue;
    t.topic_authorized_operations =
        AuthorizedOperations(ctx, request, security::ResourceType::kTopic, *t.name);
  }
}

}  // namespace

HandlerResult HandleMetadata(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(MetadataRequest req, DecodeRequest<MetadataRequest>(request));
  int16_t version = request.header.api_version;
  MetadataResponse resp;
  const std::string_view listener = request.listener;
  for (auto& b : LiveBrokers(ctx, listener))
    resp.brokers.push_back({b.node_id, b.host, b.port, b.rack});
  resp.cluster_id = ctx.store.cluster_id();
  resp.controller_id = ControllerId(ctx);

  bool all_topics = !req.topics.has_value() || (version == 0 && req.topics->empty());
  if (all_topics) {
    for (const auto& record : ctx.topics.ListTopics()) {
      // Topics the client may not DESCRIBE are left out, as Kafka does.
      if (!Authorized(ctx, request, security::AclOperation::kDescribe,
                      security::ResourceType::kTopic, record.name, false)) {
        continue;
      }
      if (auto info = ctx.topics.GetTopicInfo(record.name))
        resp.topics.push_back(DescribeTopic(ctx, *info, listener));
    }
  } else {
    bool auto_create = ctx.config.GetBool("auto.create.topics.enable") &&
                       (version < 4 || req.allow_auto_topic_creation);
    for (const auto& topic : *req.topics) {
      // v10+: a topic with an id is looked up by it, whatever its name says (the Java
      // client sends "" with the ids of topics it knows only by id, as in a KIP-848
      // assignment); without one, by name.
      if (topic.name.has_value() && topic.topic_id == protocol::Uuid{}) {
        resp.topics.push_back(LookupOrCreate(ctx, request, *topic.name, auto_create));
        continue;
      }
      MetadataResponse::Topic t;
      t.topic_id = topic.topic_id;
      t.error_code = Code(ErrorCode::kUnknownTopicId);
      for (const auto& record : ctx.topics.ListTopics()) {
        if (record.id != topic.topic_id) continue;
        if (!Authorized(ctx, request, security::AclOperation::kDescribe,
                        security::ResourceType::kTopic, record.name)) {
          t.error_code = Code(ErrorCode::kTopicAuthorizationFailed);
          break;
        }
        if (auto info = ctx.topics.GetTopicInfo(record.name))
          t = DescribeTopic(ctx, *info, listener);
      }
      resp.topics.push_back(std::move(t));
    }
  }
  AddAuthorizedOperations(ctx, request, req, resp);
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
