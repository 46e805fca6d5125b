// DescribeLogDirs (35), as kafka-log-dirs --describe uses it. A broker has one
// log directory (the first of log.dirs), so the answer is one result: its
// absolute path, every replica hosted here (or those of the partitions named;
// null topics means all) with the bytes of its local segments, and, from v4,
// the size of the directory's volume and the bytes free for the broker
// (statvfs; remote data is not counted, as in Kafka). The offset lag is 0 on
// a partition's leader and, on a follower, how far its log end is behind the
// leader's high watermark as of the last fetch (Kafka reports its own high
// watermark minus log end, which is 0 but for a moment). There are no future
// logs (AlterReplicaLogDirs is not served). A directory statvfs cannot read
// gets KAFKA_STORAGE_ERROR and no replicas, as Kafka answers for an offline
// log directory. No authorization: every caller is answered.
#include "protocol/messages/describe_log_dirs.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "kafka/authorization.h"
#include "kafka/handlers/handlers.h"
#include "kafka/logger.h"
#include "protocol/error_code.h"

namespace strata::kafka {

namespace {

using protocol::DescribeLogDirsRequest;
using protocol::DescribeLogDirsResponse;
using protocol::ErrorCode;

// The directory as an absolute path without a trailing separator.
std::string AbsolutePath(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(dir, ec);
  if (ec) return dir;
  p = p.lexically_normal();
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
  return p.string();
}

// Fills the volume sizes of `out`; false when the directory cannot be read.
bool FillVolume(const std::string& dir, DescribeLogDirsResponse::Result& out) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) {
    Log()->warn("DescribeLogDirs: log dir {} cannot be read: {}", dir, std::strerror(errno));
    return false;
  }
  out.total_bytes = static_cast<int64_t>(fs.f_blocks) * static_cast<int64_t>(fs.f_frsize);
  out.usable_bytes = static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
  return true;
}

// The partitions a request names, by topic; nullopt when it names none (all).
using Wanted = std::optional<std::map<std::string, std::set<int32_t>>>;

Wanted WantedPartitions(const DescribeLogDirsRequest& req) {
  if (!req.topics) return std::nullopt;
  std::map<std::string, std::set<int32_t>> out;
  for (const auto& t : *req.topics) out[t.topic].insert(t.partitions.begin(), t.partitions.end());
  return out;
}

bool IsWanted(const Wanted& wanted, const TopicPartition& tp) {
  if (!wanted) return true;
  auto it = wanted->find(tp.topic);
  return it != wanted->end() && it->second.contains(tp.partition);
}

int64_t OffsetLag(const broker::Partition& p, cluster::NodeId self) {
  const cluster::NodeId leader = p.leader();
  return leader == self || leader == cluster::kNoNode ? 0 : p.follower_lag();
}

// The local replicas `wanted` names, grouped by topic, in name and index order.
std::vector<DescribeLogDirsResponse::Topic> LocalReplicas(BrokerContext& ctx,
                                                          const Wanted& wanted) {
  const cluster::NodeId self(ctx.config.node_id());
  std::map<std::string, std::map<int32_t, DescribeLogDirsResponse::Partition>> by_topic;
  for (const auto& p : ctx.topics.LocalPartitions()) {
    if (!IsWanted(wanted, p->tp())) continue;
    DescribeLogDirsResponse::Partition out;
    out.partition_index = p->tp().partition;
    out.partition_size = p->log()->size_bytes();
    out.offset_lag = OffsetLag(*p, self);
    by_topic[p->tp().topic][out.partition_index] = out;
  }
  std::vector<DescribeLogDirsResponse::Topic> topics;
  for (auto& [name, partitions] : by_topic) {
    auto& t = topics.emplace_back();
    t.name = name;
    for (auto& [index, partition] : partitions) t.partitions.push_back(partition);
  }
  return topics;
}

}  // namespace

HandlerResult HandleDescribeLogDirs(BrokerContext& ctx, net::Request& request) {
  STRATA_ASSIGN_OR_RETURN(DescribeLogDirsRequest req,
                          DecodeRequest<DescribeLogDirsRequest>(request));
  DescribeLogDirsResponse resp;
  if (!AuthorizedOnCluster(ctx, request, security::AclOperation::kDescribe)) {
    resp.error_code = Code(ErrorCode::kClusterAuthorizationFailed);  // v3+; before: no dirs
    return std::optional<Bytes>(EncodeResponse(request, resp));
  }
  auto& dir = resp.results.emplace_back();
  dir.log_dir = AbsolutePath(ctx.config.log_dir());
  if (!FillVolume(dir.log_dir, dir)) {
    dir.error_code = Code(ErrorCode::kKafkaStorageError);
  } else {
    dir.topics = LocalReplicas(ctx, WantedPartitions(req));
  }
  return std::optional<Bytes>(EncodeResponse(request, resp));
}

}  // namespace strata::kafka
