// Controller::RunElections: the leader elections an operator asks for
// (ElectLeaders), decided by ElectRequested and written like the
// controller's own: under the election fence and the record's mod revision.
// A broker back with an empty log directory is forgotten first, as the
// controller's pass does (ForgetLostReplicas), so no election asked for in
// the moment it registers counts on data it lost.
#include <fmt/format.h>

#include <set>

#include "cluster/controller.h"
#include "cluster/logger.h"

namespace strata::cluster {

namespace {

constexpr int kElectionAttempts = 5;

}  // namespace

Result<std::vector<ElectionResult>> Controller::RunElections(
    ElectionType type, const std::optional<std::vector<ElectionTarget>>& wanted) {
  if (!election_.active()) return MakeError(Errc::kFenced, "this broker is not the controller");
  MetadataView& view = metadata_.view();
  const std::set<NodeId> live = view.BrokersEligibleForLeadership();
  auto is_live = [&](NodeId id) { return live.contains(id); };
  const std::map<NodeId, Revision> new_dirs = NewLogDirs();

  std::vector<ElectionTarget> targets;
  if (wanted) {
    targets = *wanted;
  } else {  // all: the partitions where such an election would change the leader
    for (const auto& topic : view.Topics()) {
      for (const auto& [p, entry] : view.Partitions(UuidToBase64(topic.record.id))) {
        if (ElectRequested(type, entry.record, is_live).outcome == ElectionOutcome::kElected)
          targets.push_back({topic.record.name, p});
      }
    }
  }
  std::vector<ElectionResult> out;
  for (const auto& target : targets) {
    ElectionResult& result = out.emplace_back(ElectionResult{target, ElectionOutcome::kNotNeeded});
    auto topic = view.Topic(target.topic);
    const std::string id = topic ? UuidToBase64(topic->record.id) : "";
    auto entry = topic ? view.Partition(id, target.partition) : std::nullopt;
    if (!entry) {
      result.unknown = true;
      continue;
    }
    const bool tiered = RemoteStorageEnabled(topic->record);
    for (int attempt = 0; attempt < kElectionAttempts; ++attempt) {
      PartitionRecord base = entry->record;
      const bool forgot =
          ForgetLostReplicas(target.topic, target.partition, *entry, new_dirs, tiered, base);
      RequestedElection decided = ElectRequested(type, base, is_live);
      result.outcome = decided.outcome;
      if (decided.outcome != ElectionOutcome::kElected) {
        if (!forgot) break;
        decided.record = base;  // no election, but what was forgotten is written
        decided.record.partition_epoch = PartitionEpoch(base.partition_epoch.value() + 1);
      }
      const std::string key = metadata_.keys().Partition(id, target.partition);
      KvCompare compares[] = {election_.Fence(),
                              KvCompare::ModRevisionIs(key, entry->mod_revision)};
      KvOp put = KvOp::Put(key, EncodePartition(decided.record));
      auto r = metadata_.kv().Txn(compares, std::span(&put, 1));
      if (!r.ok()) return r.take_error();
      if (r->succeeded) {
        view.WaitForRevision(r->revision, std::chrono::seconds(5));
        if (decided.outcome != ElectionOutcome::kElected) break;
        ++leader_changes_;
        ControllerLog()->info("{}-{}: leader {} at epoch {} ({} election asked for)", target.topic,
                              target.partition, decided.record.leader.value(),
                              decided.record.leader_epoch.value(),
                              type == ElectionType::kPreferred ? "preferred" : "unclean");
        break;
      }
      if (!election_.active()) return MakeError(Errc::kFenced, "no longer the controller");
      // Changed meanwhile (by this controller's own pass, say): decide again.
      auto got = metadata_.kv().Get(key);
      if (!got.ok()) return got.take_error();
      if (got->kvs.empty()) {
        result.unknown = true;
        break;
      }
      auto record = DecodePartition(got->kvs[0].value);
      if (!record.ok()) return record.take_error();
      entry->record = std::move(*record);
      entry->mod_revision = got->kvs[0].mod_revision;
      result.outcome = ElectionOutcome::kNotNeeded;
      if (attempt + 1 == kElectionAttempts) {
        return MakeError(Errc::kUnavailable,
                         fmt::format("{}-{} kept changing", target.topic, target.partition));
      }
    }
  }
  return out;
}

}  // namespace strata::cluster
