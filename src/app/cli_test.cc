// The operator's CLI against a whole broker in this process (server::Broker
// with embedded metadata on loopback ports): the commands an operator types,
// their exit codes and what they print.
#include "app/cli.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/broker_config.h"
#include "server/broker.h"

namespace strata::app {
namespace {

using nlohmann::json;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "strata-cli-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = new std::filesystem::path(tmpl);
    config::Properties props{{"node.id", "1"},
                             {"log.dirs", (*dir_ / "data").string()},
                             {"listeners", "PLAINTEXT://127.0.0.1:0"},
                             {"strata.admin.listener", "127.0.0.1:0"}};
    std::vector<std::string> unknown;
    broker_ =
        std::make_unique<server::Broker>(config::BrokerConfig::FromProperties(props, &unknown))
            .release();
    ASSERT_TRUE(broker_->Start().ok());
  }
  static void TearDownTestSuite() {
    broker_->Stop();
    delete broker_;  // joins its threads and closes the logs
    std::error_code ec;
    std::filesystem::remove_all(*dir_, ec);
    delete dir_;
  }

  // `strata <args...>` with the broker's bootstrap and admin addresses.
  static Outcome Run(std::vector<std::string> args, bool admin = false) {
    args.insert(args.begin(), "strata");
    args.push_back("--bootstrap=127.0.0.1:" + std::to_string(broker_->port()));
    if (admin) args.push_back("--admin=127.0.0.1:" + std::to_string(broker_->admin_port()));
    return RunRaw(args);
  }
  static Outcome RunRaw(const std::vector<std::string>& args) {
    CLI::App root;
    root.require_subcommand(1);
    auto flags = std::make_shared<CommonFlags>();
    Commands commands;
    AddTopicCommands(root, flags, commands);
    AddClusterCommands(root, flags, commands);
    AddGroupCommands(root, flags, commands);
    AddTxnCommands(root, flags, commands);
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    Outcome outcome;
    try {
      root.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
      outcome.exit_code = kExitUnreachable;  // as main(): a usage error
      outcome.err = e.what();
      return outcome;
    }
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    for (const auto& c : commands) {
      if (c.app->parsed()) outcome.exit_code = c.run();
    }
    outcome.out = ::testing::internal::GetCapturedStdout();
    outcome.err = ::testing::internal::GetCapturedStderr();
    return outcome;
  }
  static json Json(const Outcome& o) {
    json j = json::parse(o.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << o.out << o.err;
    return j;
  }

  static std::filesystem::path* dir_;
  static server::Broker* broker_;
};

std::filesystem::path* CliTest::dir_ = nullptr;
server::Broker* CliTest::broker_ = nullptr;

TEST_F(CliTest, ATopicIsCreatedListedDescribedAlteredAndDeleted) {
  Outcome created = Run({"topic", "create", "orders", "-p", "3", "-r", "1"});
  ASSERT_EQ(created.exit_code, kExitOk) << created.out << created.err;
  EXPECT_NE(created.out.find("orders"), std::string::npos);

  Outcome again = Run({"topic", "create", "orders", "-p", "3", "--format", "json"});
  EXPECT_EQ(again.exit_code, kExitRefused);
  EXPECT_NE(Json(again)[0].at("error").get<std::string>(), "");

  json listed = Json(Run({"topic", "list", "--format", "json"}));
  ASSERT_TRUE(listed.is_array()) << listed.dump();
  bool found = false;
  for (const auto& t : listed) {
    if (t.at("name") != "orders") continue;
    found = true;
    EXPECT_EQ(t.at("partitions"), 3);
    EXPECT_EQ(t.at("replicas"), 1);
  }
  EXPECT_TRUE(found) << listed.dump();

  Outcome altered = Run({"topic", "alter", "orders", "--set", "retention.ms=3600000"});
  EXPECT_EQ(altered.exit_code, kExitOk) << altered.out << altered.err;
  json described = Json(Run({"topic", "describe", "orders", "--format", "json"}));
  EXPECT_EQ(described.at("name"), "orders");
  EXPECT_EQ(described.at("configs").at("retention.ms"), "3600000");
  ASSERT_EQ(described.at("partitions").size(), 3u);
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(described.at("partitions")[p].at("partition"), p);
    EXPECT_EQ(described.at("partitions")[p].at("leader"), 1);
    EXPECT_EQ(described.at("partitions")[p].at("isr"), json::array({1}));
  }

  Outcome deleted = Run({"topic", "delete", "orders"});
  EXPECT_EQ(deleted.exit_code, kExitOk) << deleted.out << deleted.err;
  json after = Json(Run({"topic", "list", "--format", "json"}));
  for (const auto& t : after) EXPECT_NE(t.at("name"), "orders");
  EXPECT_EQ(Run({"topic", "describe", "orders"}).exit_code, kExitRefused);
}

TEST_F(CliTest, ClusterInfoAndHealthDescribeTheOneBroker) {
  json info = Json(Run({"cluster", "info", "--format", "json"}));
  EXPECT_FALSE(info.at("cluster_id").get<std::string>().empty());
  ASSERT_EQ(info.at("brokers").size(), 1u) << info.dump();
  EXPECT_EQ(info.at("brokers")[0].at("id"), 1);
  EXPECT_EQ(info.at("brokers")[0].at("port"), broker_->port());

  Outcome health = Run({"cluster", "health", "--format", "json"}, true);
  EXPECT_EQ(health.exit_code, kExitOk) << health.out << health.err;
  EXPECT_TRUE(Json(health).at("healthy").get<bool>());
}

// With transactions: tests/integration/test_cli.py.
TEST_F(CliTest, TxnListAnswersEmptyWithoutTransactionsAndRefusesAnUnknownState) {
  Outcome listed = Run({"txn", "list", "--format", "json"});
  EXPECT_EQ(listed.exit_code, kExitOk) << listed.out << listed.err;
  EXPECT_EQ(Json(listed), json::array());
  Outcome human = Run({"transactions", "list"});
  EXPECT_EQ(human.exit_code, kExitOk) << human.err;
  EXPECT_NE(human.out.find("TRANSACTIONAL-ID"), std::string::npos) << human.out;
  Outcome bogus = Run({"txn", "list", "--state", "Bogus"});
  EXPECT_EQ(bogus.exit_code, kExitUnreachable);
  EXPECT_NE(bogus.err.find("unknown state Bogus"), std::string::npos) << bogus.err;
}

TEST_F(CliTest, NothingListeningIsExitCodeTwo) {
  // A port just closed: bound to learn it, then released.
  uint16_t port = 0;
  {
    asio::io_context io;
    asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
    port = a.local_endpoint().port();
  }
  Outcome o = RunRaw({"strata", "topic", "list", "--bootstrap=127.0.0.1:" + std::to_string(port),
                      "--timeout-ms", "2000"});
  EXPECT_EQ(o.exit_code, kExitUnreachable) << o.out << o.err;
  EXPECT_NE(o.err.find("strata:"), std::string::npos) << o.err;
}

TEST_F(CliTest, AnUnknownOptionIsAUsageError) {
  EXPECT_EQ(RunRaw({"strata", "topic", "create", "x", "--no-such-flag"}).exit_code,
            kExitUnreachable);
}

}  // namespace
}  // namespace strata::app
