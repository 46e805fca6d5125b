// DeleteTopics (20): by name (v0-5) or by name or id (v6+).
#include "protocol/messages/delete_topics.h"

#include "kafka/authorization.h"
#include "kafka/error_mapping.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"

namespace strata::kafka {

namespace {

using protocol::DeleteTopicsRequest;
using protocol::DeleteTopicsResponse;
using protocol::ErrorCode;

void DeleteOne(BrokerContext& ctx, const net::Request& request, const std::string& name,
               DeleteTopicsResponse::TopicResult& out) {
  if (!Authorized(ctx, request, security::AclOperation::kDelete, security::ResourceType::kTopic,
                  name)) {
    out.error_code = Code(ErrorCode::kTopicAuthorizationFailed);
    out.error_message = "Authorization failed.";
    return;
  }
  if (!ctx.config.GetBool("delete.topic.enable")) {
    out.error_code = Code(ErrorCode::kTopicDeletionDisabled);
    return;
  }
  auto info = ctx.topics.GetTopicInfo(name);
  if (!info) {
    out.error_code = Code(ErrorCode::kUnknownTopicOrPartition);
    out.error_message = "This server does not host this topic-partition.";
    return;
  }
  out.topic_id = info->record.id;
  Status st = ctx.topics.DeleteTopic(name);
  if (!st.ok()) {
    out.error_code = Code(TopicWriteErrorCode(st.error().code));
    out.error_message = st.error().message;
  }
}

}  // namespace

HandlerResult HandleDeleteTopics(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(DeleteTopicsRequest req, DecodeRequest<DeleteTopicsRequest>(request));
  DeleteTopicsResponse resp;
  for (const auto& name : req.topic_names) {
    auto& out = resp.responses.emplace_back();
    out.name = name;
    DeleteOne(ctx, request, name, out);
  }
  for (const auto& topic : req.topics) {
    auto& out = resp.responses.emplace_back();
    std::optional<std::string> name = topic.name;
    if (!name) {
      for (const auto& record : ctx.topics.ListTopics()) {
        if (record.id == topic.topic_id) name = record.name;
      }
    }
    out.name = name;
    out.topic_id = topic.topic_id;
    if (!name) {
      out.error_code = Code(ErrorCode::kUnknownTopicId);
      continue;
    }
    DeleteOne(ctx, request, *name, out);
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

HandlerResult DeleteTopicsControllerUnavailable(net::Request& request, ErrorCode code,
                                                const std::string& message) {
  STRATA_ASSIGN_OR_RETURN(auto req, DecodeRequest<DeleteTopicsRequest>(request));
  DeleteTopicsResponse resp;
  for (const auto& name : req.topic_names)
    resp.responses.push_back({name, {}, Code(code), message});
  for (const auto& t : req.topics)
    resp.responses.push_back({t.name, t.topic_id, Code(code), message});
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
