// `strata partition move`: a reassignment through the controller, as
// kafka-reassign-partitions --execute makes it, followed until done with a
// progress bar (bytes copied from the leader's admin API when it answers).
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/cli.h"
#include "protocol/messages/alter_partition_reassignments.h"
#include "protocol/messages/list_partition_reassignments.h"

namespace strata::app {

namespace {

using nlohmann::json;

constexpr int16_t kAlterReassignmentsVersion = 0;
constexpr int16_t kListReassignmentsVersion = 0;

struct MoveFlags {
  std::string partition;  // topic:partition
  std::vector<int32_t> replicas;
  bool wait = true;
  int64_t wait_s = 600;
};

// The reassignment of topic-partition as ListPartitionReassignments shows
// it: nullopt when none is in progress.
Result<std::optional<protocol::ListPartitionReassignmentsResponse::Partition>> Pending(
    KafkaAdmin& admin, const std::string& topic, int32_t partition) {
  protocol::ListPartitionReassignmentsRequest req;
  req.topics.emplace();
  req.topics->push_back({topic, {partition}});
  auto r = admin.Call<protocol::ListPartitionReassignmentsRequest,
                      protocol::ListPartitionReassignmentsResponse>(req, kListReassignmentsVersion);
  if (!r.ok()) return r.take_error();
  if (r->error_code != 0) {
    return MakeError(Errc::kUnavailable, DescribeError(r->error_code, r->error_message));
  }
  for (const auto& t : r->topics) {
    for (const auto& p : t.partitions) {
      if (t.name == topic && p.partition_index == partition) return std::optional(p);
    }
  }
  return std::optional<protocol::ListPartitionReassignmentsResponse::Partition>();
}

// Bytes copied and to copy by the replicas being added, from the admin API
// (only the leader's shows them); {0, 0} when unknown.
std::pair<int64_t, int64_t> CopyProgress(const std::string& admin, const std::string& topic,
                                         int32_t partition) {
  const HttpAnswer a = AdminHttp("GET", admin, "/v1/reassignments");
  if (a.status != 200) return {0, 0};
  int64_t copied = 0, total = 0;
  try {
    for (const auto& c : json::parse(a.body)) {
      if (c.value("topic", "") != topic || c.value("partition", -1) != partition) continue;
      copied += c.value("bytes_copied", int64_t{0});
      total += c.value("bytes_total", int64_t{0});
    }
  } catch (const std::exception&) {
  }
  return {copied, total};
}

void DrawProgress(int64_t copied, int64_t total, const std::string& state) {
  constexpr int kWidth = 30;
  const double done = total > 0 ? std::min(1.0, double(copied) / double(total)) : 0.0;
  const int filled = static_cast<int>(done * kWidth);
  std::cerr << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '-') << "] "
            << (total > 0 ? std::to_string(int(done * 100)) + "% " : std::string()) << state
            << "        " << std::flush;
}

int Move(KafkaAdmin& admin, const CommonFlags& f, const MoveFlags& m) {
  const size_t colon = m.partition.rfind(':');
  int32_t partition = -1;
  try {
    if (colon != std::string::npos) partition = std::stoi(m.partition.substr(colon + 1));
  } catch (const std::exception&) {
  }
  if (colon == std::string::npos || colon == 0 || partition < 0) {
    return Fail("partition move: give the partition as topic:partition", kExitUnreachable);
  }
  const std::string topic = m.partition.substr(0, colon);
  protocol::AlterPartitionReassignmentsRequest req;
  req.timeout_ms = static_cast<int32_t>(f.timeout_ms);
  req.topics.push_back({topic, {{partition, m.replicas}}});
  auto r =
      admin.Call<protocol::AlterPartitionReassignmentsRequest,
                 protocol::AlterPartitionReassignmentsResponse>(req, kAlterReassignmentsVersion);
  if (!r.ok()) return Fail("partition move: " + r.error().message, kExitUnreachable);
  std::string error = DescribeError(r->error_code, r->error_message);
  for (const auto& t : r->responses) {
    for (const auto& p : t.partitions) {
      if (error.empty()) error = DescribeError(p.error_code, p.error_message);
    }
  }
  if (!error.empty()) return Fail("partition move " + m.partition + ": " + error, kExitRefused);
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  bool done = !m.wait;
  std::vector<int32_t> replicas, isr;
  while (!done) {
    auto pending = Pending(admin, topic, partition);
    auto md = admin.Metadata(std::vector<std::string>{topic});
    if (pending.ok() && md.ok() && !md->topics.empty()) {
      for (const auto& p : md->topics.front().partitions) {
        if (p.partition_index != partition) continue;
        replicas = p.replica_nodes;
        isr = p.isr_nodes;
      }
      auto [copied, total] = CopyProgress(f.admin, topic, partition);
      done = !pending->has_value();
      if (!f.json()) {
        const std::string state = done ? "done"
                                       : "adding [" + JoinIds((*pending)->adding_replicas) +
                                             "], ISR [" + JoinIds(isr) + "]";
        DrawProgress(done ? 1 : copied, done ? 1 : total, state);
      }
    }
    if (done) break;
    if (elapsed() > double(m.wait_s)) {
      if (!f.json()) std::cerr << "\n";
      return Fail("partition move " + m.partition + ": not done within " +
                      std::to_string(m.wait_s) + " s (it goes on; see ListPartitionReassignments)",
                  kExitRefused);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  if (f.json()) {
    std::cout << json{{"topic", topic},
                      {"partition", partition},
                      {"target_replicas", m.replicas},
                      {"replicas", replicas},
                      {"isr", isr},
                      {"done", m.wait},
                      {"seconds", elapsed()}}
                     .dump(2)
              << "\n";
  } else {
    if (m.wait) std::cerr << "\n";
    std::cout << (m.wait ? "moved " : "moving ") << m.partition << " to replicas ["
              << JoinIds(m.replicas) << "]" << (m.wait ? " in " : "")
              << (m.wait ? std::to_string(int(elapsed())) + " s" : "") << "\n";
  }
  return kExitOk;
}

}  // namespace

void AddPartitionCommands(CLI::App& root, const std::shared_ptr<CommonFlags>& flags,
                          Commands& out) {
  auto m = std::make_shared<MoveFlags>();
  auto* partition = root.add_subcommand("partition", "move partitions between brokers");
  partition->require_subcommand(1);
  auto* move = partition->add_subcommand(
      "move",
      "reassign a partition's replicas and wait until done (the first is preferred leader)");
  AddCommonOptions(move, *flags, true, true);
  move->add_option("partition", m->partition, "topic:partition")->required();
  move->add_option("--replicas,-r", m->replicas, "the new replica list, e.g. 1,2,4")
      ->delimiter(',')
      ->required();
  move->add_flag("!--no-wait", m->wait, "start the move and return");
  move->add_option("--wait-s", m->wait_s, "give up waiting after this long")->capture_default_str();
  out.push_back({move, [flags, m] {
                   int code = kExitOk;
                   auto admin = ConnectOrFail(*flags, &code);
                   return admin ? Move(*admin, *flags, *m) : code;
                 }});
}

}  // namespace strata::app
