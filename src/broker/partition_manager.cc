#include "broker/partition_manager.h"

#include <fmt/format.h>

#include "broker/local_replicas.h"
#include "broker/logger.h"

namespace strata::broker {

PartitionManager::PartitionManager(std::filesystem::path log_dir, cluster::NodeId self,
                                   Clock* clock, Env* env, storage::LogCleaner* cleaner)
    : log_dir_(std::move(log_dir)), self_(self), clock_(clock), env_(env), cleaner_(cleaner) {}

std::filesystem::path PartitionManager::Dir(const TopicPartition& tp) const {
  return log_dir_ / tp.ToString();
}

void PartitionManager::LoadCheckpointedMarks() {
  auto marks = storage::ReadHighWatermarks(log_dir_.string(), env_);
  if (marks.ok()) {
    checkpointed_marks_ = std::move(*marks);
  } else {
    Log()->warn("{}; high watermarks start from the log start", marks.error().message);
  }
}

Result<std::shared_ptr<Partition>> PartitionManager::Open(const cluster::TopicRecord& topic,
                                                          int32_t p,
                                                          const cluster::PartitionRecord& state,
                                                          const storage::LogConfig& config,
                                                          const Prepare& prepare) {
  TopicPartition tp{topic.name, p};
  const std::string topic_id = cluster::UuidToBase64(topic.id);
  auto claimed = ClaimPartitionDir(Dir(tp), topic_id, env_);
  if (!claimed.ok()) {
    return MakeError(claimed.error().code,
                     fmt::format("claiming {}: {}", tp.ToString(), claimed.error().message));
  }
  if (*claimed) {
    Log()->warn(
        "{}: its directory held the data of an older topic of that name (deleted while "
        "this broker was down); that data is deleted",
        tp.ToString());
  }
  auto opened = storage::Log::Open(Dir(tp), config, clock_, env_);
  if (!opened.ok()) {
    return MakeError(opened.error().code,
                     fmt::format("opening log {}: {}", tp.ToString(), opened.error().message));
  }
  std::shared_ptr<storage::Log> log = std::move(opened).value();
  auto mark = checkpointed_marks_.find({tp.topic, tp.partition});
  auto partition = std::make_shared<Partition>(
      tp, topic_id, log, state, self_, clock_->MonotonicMs(),
      mark == checkpointed_marks_.end() ? Offset(0) : Offset(mark->second));
  partition->SetWakeListener(wake_);
  if (cleaner_) cleaner_->Register(tp, log);
  if (prepare) prepare(partition);
  std::unique_lock lock(mu_);
  partitions_[tp] = partition;
  return partition;
}

std::shared_ptr<Partition> PartitionManager::Unpublish(const TopicPartition& tp) {
  std::shared_ptr<Partition> partition;
  {
    std::unique_lock lock(mu_);
    auto it = partitions_.find(tp);
    if (it == partitions_.end()) return nullptr;
    partition = std::move(it->second);
    partitions_.erase(it);
  }
  partition->MarkRemoved();
  if (wake_) wake_(tp);
  return partition;
}

Status PartitionManager::DeleteData(Partition& partition) {
  if (cleaner_) cleaner_->Unregister(partition.tp());
  Status st = partition.log()->Delete();
  if (!st.ok()) {
    return MakeError(
        st.error().code,
        fmt::format("deleting log {}: {}", partition.log()->dir().string(), st.error().message));
  }
  return Status::Ok();
}

void PartitionManager::CloseAll() {
  std::unique_lock lock(mu_);
  for (auto& [tp, partition] : partitions_) {
    Status st = partition->log()->Close();
    if (!st.ok()) Log()->error("closing {}: {}", tp.ToString(), st.error().message);
  }
  partitions_.clear();
}

std::shared_ptr<Partition> PartitionManager::Get(const TopicPartition& tp) const {
  std::shared_lock lock(mu_);
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<Partition>> PartitionManager::All() const {
  std::shared_lock lock(mu_);
  std::vector<std::shared_ptr<Partition>> out;
  out.reserve(partitions_.size());
  for (const auto& [tp, p] : partitions_) out.push_back(p);
  return out;
}

std::vector<std::shared_ptr<Partition>> PartitionManager::Led() const {
  std::vector<std::shared_ptr<Partition>> led;
  std::shared_lock lock(mu_);
  for (const auto& [tp, p] : partitions_) {
    if (p->leader() == self_) led.push_back(p);
  }
  return led;
}

std::vector<std::shared_ptr<Partition>> PartitionManager::OfTopic(const std::string& topic,
                                                                  int32_t partitions) const {
  std::vector<std::shared_ptr<Partition>> hosted;
  std::shared_lock lock(mu_);
  for (int32_t p = 0; p < partitions; ++p) {
    auto it = partitions_.find({topic, p});
    if (it != partitions_.end()) hosted.push_back(it->second);
  }
  return hosted;
}

size_t PartitionManager::size() const {
  std::shared_lock lock(mu_);
  return partitions_.size();
}

void PartitionManager::ApplyLogConfig(const std::vector<std::shared_ptr<Partition>>& hosted,
                                      const storage::LogConfig& config) {
  for (const auto& partition : hosted) partition->log()->UpdateConfig(config);
  if (cleaner_ && config.compacted) cleaner_->Wake();
}

Status PartitionManager::CheckpointHighWatermarks() const {
  storage::HighWatermarks marks;
  {
    std::shared_lock lock(mu_);
    for (const auto& [tp, p] : partitions_)
      marks[{tp.topic, tp.partition}] = p->high_watermark().value();
  }
  return storage::WriteHighWatermarks(log_dir_.string(), marks, env_);
}

void PartitionManager::DeleteStrayDirs() const {
  auto placed = [this](const std::string& topic, int32_t partition) {
    return Contains({topic, partition});
  };
  for (const auto& dir : StrayPartitionDirs(log_dir_, placed)) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec) {
      Log()->error("deleting stray partition directory {}: {}", dir.string(), ec.message());
    } else {
      Log()->warn(
          "deleted stray partition directory {}: no replica of it is placed on this "
          "broker (its topic was deleted, or it moved, while the broker was down)",
          dir.string());
    }
  }
}

int64_t PartitionManager::TotalLogBytes() const {
  std::shared_lock lock(mu_);
  int64_t total = 0;
  for (const auto& [tp, partition] : partitions_) total += partition->log()->size_bytes();
  return total;
}

}  // namespace strata::broker
