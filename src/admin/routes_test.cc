// The admin API's routes over a real HTTP server on loopback and an
// in-process broker (a TopicManager over the real embedded metadata store,
// with a transaction coordinator where a test makes one): what an
// operator's curl sees.
#include "admin/routes.h"

#include <gtest/gtest.h>

#include <asio.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "coordinator/txn_coordinator.h"
#include "coordinator/txn_log.h"
#include "kafka/coordinator_topic.h"
#include "kafka/handlers/handlers.h"
#include "kafka/handlers/test_requests.h"
#include "kafka/in_process_broker.h"

namespace strata::admin {
namespace {

using cluster::NodeId;
using nlohmann::json;

struct Answer {
  int status = 0;
  std::string body;
};

class AdminRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    broker_.MakeTopic("orders", {{NodeId(1)}, {NodeId(1)}});
    broker_.MakeTopic(coordinator::kTransactionStateTopic, {{NodeId(1)}});  // for a coordinator
    ASSERT_TRUE(broker_.topics().Start().ok());
    server_ = std::make_unique<HttpServer>(io_, "127.0.0.1", 0);
    RegisterAdminRoutes(*server_, admin_);
    ASSERT_TRUE(server_->Start().ok());
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    server_->Stop();
    io_.stop();
    thread_.join();
  }

  // One request, as curl sends it; the status line's code and the body.
  Answer Call(const std::string& method, const std::string& target) {
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    socket.connect({asio::ip::make_address("127.0.0.1"), server_->bound_port()});
    const std::string request =
        method + " " + target + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n";
    asio::write(socket, asio::buffer(request));
    std::string raw;
    asio::error_code ec;
    asio::read(socket, asio::dynamic_buffer(raw), ec);  // until the server closes
    EXPECT_EQ(ec, asio::error::eof) << ec.message();
    Answer out;
    const size_t space = raw.find(' ');
    if (space == std::string::npos) return out;
    out.status = std::stoi(raw.substr(space + 1, 3));
    const size_t body = raw.find("\r\n\r\n");
    if (body != std::string::npos) out.body = raw.substr(body + 4);
    return out;
  }
  json GetJson(const std::string& target, int expect_status = 200) {
    Answer a = Call("GET", target);
    EXPECT_EQ(a.status, expect_status) << target << ": " << a.body;
    return json::parse(a.body, nullptr, false);
  }

  // `n` records into orders-`partition` through the Produce handler (acks=1).
  void Produce(int32_t partition, int n) {
    auto answer = kafka::testing::ProduceRecords(broker_.context(), "orders", partition, n, "v");
    ASSERT_EQ(answer.error_code, 0);
  }

  kafka::testing::InProcessBroker broker_;
  AdminContext admin_{broker_.context()};
  asio::io_context io_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

TEST_F(AdminRoutesTest, TopicsListEachLocalPartitionWithItsOffsetsAndReplicas) {
  Produce(1, 5);
  json topics = GetJson("/v1/topics");
  ASSERT_TRUE(topics.is_array()) << topics.dump();
  const json* orders = nullptr;
  for (const auto& t : topics) {
    if (t.at("name") == "orders") orders = &t;
  }
  ASSERT_NE(orders, nullptr) << topics.dump();
  EXPECT_FALSE(orders->at("internal").get<bool>());
  ASSERT_EQ(orders->at("partitions").size(), 2u);
  const json& p0 = orders->at("partitions")[0];
  const json& p1 = orders->at("partitions")[1];
  EXPECT_EQ(p0.at("partition"), 0);
  EXPECT_EQ(p0.at("log_end_offset"), 0);
  EXPECT_EQ(p1.at("partition"), 1);
  EXPECT_EQ(p1.at("log_end_offset"), 5);
  EXPECT_EQ(p1.at("high_watermark"), 5);
  EXPECT_EQ(p1.at("last_stable_offset"), 5);  // no transaction holds it back
  EXPECT_EQ(p1.at("open_transactions"), json::array());
  EXPECT_EQ(p1.at("leader"), 1);
  EXPECT_EQ(p1.at("replicas"), json::array({1}));
  EXPECT_EQ(p1.at("isr"), json::array({1}));
}

TEST_F(AdminRoutesTest, ClusterDescribesThisBrokerFromTheStore) {
  json cluster = GetJson("/v1/cluster");
  EXPECT_EQ(cluster.at("cluster_id"), broker_.metadata().cluster_id());
  EXPECT_EQ(cluster.at("node_id"), 1);
  ASSERT_TRUE(cluster.at("brokers").is_array()) << cluster.dump();
}

TEST_F(AdminRoutesTest, TheBalancerRoutesSayWhenThereIsNoBalancer) {
  Answer status = Call("GET", "/v1/balancer");
  EXPECT_EQ(status.status, 503);
  EXPECT_NE(status.body.find("cluster mode"), std::string::npos) << status.body;
  EXPECT_EQ(Call("POST", "/v1/balancer/pause").status, 503);
  EXPECT_EQ(Call("GET", "/v1/balancer/plan").status, 503);
}

TEST_F(AdminRoutesTest, ReassignmentsAndGroupsAnswerEmptyOnAQuietBroker) {
  EXPECT_EQ(GetJson("/v1/reassignments"), json::array());
  EXPECT_TRUE(GetJson("/v1/groups").is_array());
  EXPECT_EQ(GetJson("/v1/transactions"), json::array());  // no transaction coordinator
}

// A transaction coordinator over this broker's __transaction_state (one
// partition, led here): an open transaction and an idle id, as
// GET /v1/transactions lists them.
TEST_F(AdminRoutesTest, TransactionsListTheIdsCoordinatedHere) {
  using coordinator::TxnReply;
  kafka::BrokerContext& ctx = broker_.context();
  int64_t next_pid = 7000;
  coordinator::TxnCoordinator txns(
      coordinator::TxnCoordinatorConfig{},
      kafka::MakeCoordinatorLog(broker_.topics(), coordinator::kTransactionStateTopic, 1,
                                Clock::Real()),
      [&next_pid]() -> Result<int64_t> { return next_pid++; }, Clock::Real());
  auto partition = broker_.topics().GetPartition({coordinator::kTransactionStateTopic, 0});
  ASSERT_NE(partition, nullptr);
  ASSERT_TRUE(txns.LoadPartition(0, partition->leader_epoch().value()).ok());
  auto apply = [&txns](const TxnReply& reply) {
    ASSERT_TRUE(reply.write);
    ASSERT_EQ(txns.Finish(*reply.write, true), protocol::ErrorCode::kNone);
  };
  apply(txns.InitProducerId("tx-open", 60000, std::nullopt));
  apply(txns.AddPartitions("tx-open", 7000, 0, {{"orders", 1}, {"orders", 0}}, 0));
  apply(txns.InitProducerId("tx-idle", 30000, std::nullopt));
  ctx.txn_coordinator = &txns;

  json listed = GetJson("/v1/transactions");
  ctx.txn_coordinator = nullptr;  // before `txns` goes
  ASSERT_TRUE(listed.is_array()) << listed.dump();
  ASSERT_EQ(listed.size(), 2u) << listed.dump();
  const json& idle = listed[0];  // sorted by id
  EXPECT_EQ(idle.at("transactional_id"), "tx-idle");
  EXPECT_EQ(idle.at("state"), "Empty");
  EXPECT_EQ(idle.at("producer_id"), 7001);
  EXPECT_EQ(idle.at("timeout_ms"), 30000);
  EXPECT_EQ(idle.at("start_ms"), -1);
  EXPECT_EQ(idle.at("partitions"), json::array());
  const json& open = listed[1];
  EXPECT_EQ(open.at("transactional_id"), "tx-open");
  EXPECT_EQ(open.at("state"), "Ongoing");
  EXPECT_EQ(open.at("producer_id"), 7000);
  EXPECT_EQ(open.at("producer_epoch"), 0);
  EXPECT_EQ(open.at("timeout_ms"), 60000);
  EXPECT_GT(open.at("start_ms").get<int64_t>(), 0);
  EXPECT_EQ(open.at("partitions"),
            json::parse(R"([{"topic":"orders","partition":0},{"topic":"orders","partition":1}])"));
}

TEST_F(AdminRoutesTest, MetricsConsoleAndUnknownPaths) {
  Answer metrics = Call("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  Answer console = Call("GET", "/console");
  EXPECT_EQ(console.status, 200);
  EXPECT_NE(console.body.find("<html"), std::string::npos);
  EXPECT_EQ(Call("GET", "/v1/nothing-here").status, 404);
  EXPECT_EQ(Call("POST", "/v1/topics").status, 405);  // GET only
}

}  // namespace
}  // namespace strata::admin
