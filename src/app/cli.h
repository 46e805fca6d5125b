#pragma once
// The `strata` CLI's commands for daily work (topic, group, txn, cluster,
// partition, tier), in the manner of Redpanda's rpk: over the Kafka protocol
// (KafkaAdmin) and the admin API, human tables by default and JSON with
// `--format json`. Exit codes scripts can trust: 0 done (for `cluster
// health`: healthy); 1 the cluster refused or is not healthy; 2 it could not
// be reached or the arguments are wrong.
#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "app/kafka_admin.h"

namespace strata::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRefused = 1;
inline constexpr int kExitUnreachable = 2;

// Flags every command shares.
struct CommonFlags {
  std::string bootstrap = "127.0.0.1:9092";
  std::string admin = "127.0.0.1:8085";  // admin API host:port
  std::string format = "human";
  int64_t timeout_ms = 30000;
  std::string command_config;  // --command-config: Kafka-style client properties
  bool json() const { return format == "json"; }
  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(timeout_ms); }
};

// A subcommand and what runs it when parsed.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};
using Commands = std::vector<Command>;

void AddTopicCommands(CLI::App& root, const std::shared_ptr<CommonFlags>& flags, Commands& out);
void AddGroupCommands(CLI::App& root, const std::shared_ptr<CommonFlags>& flags, Commands& out);
void AddClusterCommands(CLI::App& root, const std::shared_ptr<CommonFlags>& flags, Commands& out);
void AddPartitionCommands(CLI::App& root, const std::shared_ptr<CommonFlags>& flags, Commands& out);
void AddTierCommands(CLI::App& root, const std::shared_ptr<CommonFlags>& flags, Commands& out);
void AddTxnCommands(CLI::App& root, const std::shared_ptr<CommonFlags>& flags, Commands& out);

// --bootstrap, --format and --timeout-ms on `sub` (with --admin when `admin`).
void AddCommonOptions(CLI::App* sub, CommonFlags& flags, bool bootstrap, bool admin);

// Connects, or prints why not and sets *exit_code.
std::unique_ptr<KafkaAdmin> ConnectOrFail(const CommonFlags& flags, int* exit_code);
// Prints "strata: <what>" to stderr and returns `code`.
int Fail(const std::string& what, int code);

// Columns aligned under a header, for people.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string JoinIds(const std::vector<int32_t>& ids);

// An admin API GET or POST: {status, body}; status 0 with the error in
// body when nothing answered.
struct HttpAnswer {
  long status = 0;
  std::string body;
};
// `admin`: host:port (http) or a URL (https://host:port); the bearer token,
// CA and client certificate come from --command-config.
HttpAnswer AdminHttp(const std::string& method, const std::string& admin, const std::string& path);

}  // namespace strata::app
