// DeleteRecords (21): moves a partition's log start offset forward on its
// leader, up to the high watermark (-1 = the high watermark, as Kafka); on a
// tiered partition the remote segments wholly below it go in the background.
#include "protocol/messages/delete_records.h"

#include "kafka/authorization.h"
#include "kafka/error_mapping.h"
#include "kafka/handlers/handlers.h"
#include "protocol/error_code.h"

namespace strata::kafka {

using protocol::ErrorCode;

HandlerResult HandleDeleteRecords(BrokerContext& ctx, net::Request& request) {
  using protocol::DeleteRecordsRequest;
  STRATA_ASSIGN_OR_RETURN(DeleteRecordsRequest req, DecodeRequest<DeleteRecordsRequest>(request));
  protocol::DeleteRecordsResponse resp;
  for (const auto& topic : req.topics) {
    auto& out_topic = resp.topics.emplace_back();
    out_topic.name = topic.name;
    const bool may_delete = Authorized(ctx, request, security::AclOperation::kDelete,
                                       security::ResourceType::kTopic, topic.name);
    for (const auto& p : topic.partitions) {
      auto& out = out_topic.partitions.emplace_back();
      out.partition_index = p.partition_index;
      if (!may_delete) {
        out.error_code = Code(ErrorCode::kTopicAuthorizationFailed);
        out.low_watermark = -1;
        continue;
      }
      broker::LeaderLookup leader = ctx.topics.LeaderPartition({topic.name, p.partition_index}, -1);
      if (leader.error != ErrorCode::kNone) {
        out.error_code = Code(leader.error);
        out.low_watermark = -1;
        continue;
      }
      const std::shared_ptr<storage::Log>& log = leader.partition->log();
      // -1: the high watermark; nothing beyond it may be deleted (Kafka).
      const Offset high_watermark = ctx.topics.HighWatermark(*leader.partition);
      const Offset offset = p.offset == -1 ? high_watermark : Offset(p.offset);
      if (offset < Offset(0) || offset > high_watermark) {
        out.error_code = Code(ErrorCode::kOffsetOutOfRange);
        out.low_watermark = -1;
        continue;
      }
      Status st =
          offset > log->log_start_offset() ? log->DeleteRecordsBefore(offset) : Status::Ok();
      // Tiered: the log start moves at once; remote segments wholly below it
      // are deleted in the background.
      TopicPartition tp{topic.name, p.partition_index};
      tiered::RemoteLogManager* remote = ctx.topics.remote();
      if (st.ok() && remote != nullptr && remote->IsTiered(tp)) {
        st = remote->DeleteRecordsBefore(tp, offset);
      }
      if (!st.ok()) out.error_code = Code(GenericErrorCode(st.error().code));
      out.low_watermark = ctx.topics.LogStartOffset(tp, *log).value();
    }
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
