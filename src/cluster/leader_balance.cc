// Controller::BalanceLeaders: automatic preferred-leader election
// (auto.leader.rebalance.enable). After a broker restarts it leads nothing;
// this gives its preferred partitions back once it is in their ISRs, as
// Kafka's controller does, written through RunElections like an operator's
// preferred election.
#include <fmt/format.h>

#include <map>
#include <set>

#include "cluster/controller.h"
#include "cluster/logger.h"

namespace strata::cluster {

void Controller::BalanceLeaders() {
  MetadataView& view = metadata_.view();
  const std::set<NodeId> live = view.BrokersEligibleForLeadership();
  std::vector<PartitionRecord> records;
  std::vector<ElectionTarget> names;
  for (const auto& topic : view.Topics()) {
    for (const auto& [p, entry] : view.Partitions(UuidToBase64(topic.record.id))) {
      records.push_back(entry.record);
      names.push_back({topic.record.name, p});
    }
  }
  std::vector<const PartitionRecord*> ptrs;
  ptrs.reserve(records.size());
  for (const auto& r : records) ptrs.push_back(&r);
  const std::vector<size_t> chosen = PartitionsToRebalance(
      ptrs, [&](NodeId id) { return live.contains(id); }, options_.leader_imbalance_percent);
  if (chosen.empty()) return;

  std::map<NodeId, int> per_broker;
  std::vector<ElectionTarget> targets;
  for (size_t i : chosen) {
    per_broker[records[i].replicas.front()]++;
    targets.push_back(names[i]);
  }
  std::string summary;
  for (const auto& [broker, n] : per_broker) {
    summary += fmt::format("{}broker {}: {}", summary.empty() ? "" : ", ", broker.value(), n);
  }
  ControllerLog()->info(
      "leader imbalance above {}% (leader.imbalance.per.broker.percentage): preferred elections "
      "for {} partitions ({})",
      options_.leader_imbalance_percent, targets.size(), summary);
  auto results = RunElections(ElectionType::kPreferred, targets);
  if (!results.ok()) {
    ControllerLog()->warn("automatic preferred elections: {}", results.error().message);
    return;
  }
  int elected = 0;
  for (const auto& r : *results) elected += r.outcome == ElectionOutcome::kElected ? 1 : 0;
  ControllerLog()->info("automatic preferred elections: {} of {} partitions moved", elected,
                        targets.size());
}

}  // namespace strata::cluster
