#pragma once
// ControllerForwarder: sends the controller-bound requests (the rows of
// handlers/api_table.h marked so: CreateTopics, CreatePartitions, DeleteTopics,
// ElectLeaders, AlterPartitionReassignments) that reach a broker other than
// the active controller on to the controller, wrapped in an Envelope as Kafka 4.x
// brokers forward them, and hands the controller's response back to the
// client unchanged (the forwarded frame keeps the client's correlation id).
// A client may therefore send them to any broker.
//
// Retries while the controller is unknown, unreachable or says it no longer
// is one (NOT_CONTROLLER), with backoff, until controller.socket.timeout.ms;
// then answers every topic of the request with NOT_CONTROLLER (no controller)
// or REQUEST_TIMED_OUT. A broker that becomes the controller meanwhile
// handles the request itself.
//
// Also asks the controller to create topics on the broker's own behalf
// (auto-creation by Metadata, __consumer_offsets at the first
// FindCoordinator): fire and forget, one request in flight per topic.
//
// Thread-safety: all methods are safe from any thread.
#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "kafka/broker_context.h"
#include "kafka/codec.h"
#include "net/client.h"
#include "protocol/error_code.h"
#include "protocol/messages/elect_leaders.h"

namespace strata::kafka {

// An ElectLeaders response with every asked partition (and, v1+, the whole
// response) failed with `code`.
protocol::ElectLeadersResponse ElectLeadersFailed(const protocol::ElectLeadersRequest& req,
                                                  protocol::ErrorCode code,
                                                  const std::string& message);

// The response of a controller-bound request (handlers/api_table.h) with every
// topic failed.
HandlerResult ControllerBoundErrorResponse(net::Request& request, protocol::ErrorCode code,
                                           const std::string& message);

class ControllerForwarder {
 public:
  // `store_unreachable`: why this broker cannot reach the metadata store now
  // (its session is fenced), or nullopt. Requests then fail at once with
  // REQUEST_TIMED_OUT: no controller can commit anything either.
  ControllerForwarder(BrokerContext& ctx, asio::any_io_executor executor,
                      std::function<bool()> is_active_controller,
                      std::function<std::optional<std::string>()> store_unreachable,
                      std::chrono::milliseconds timeout);
  ~ControllerForwarder();

  bool IsActiveController() const { return is_active_controller_(); }

  // The controller's response to `request`, or nullopt when this broker has
  // become the active controller and must handle it itself.
  asio::awaitable<std::optional<HandlerResult>> Forward(net::Request& request);

  // Asks the controller to create `topic` with the defaults (auto-creation).
  void RequestTopicCreation(const std::string& topic);

 private:
  struct Target {
    int32_t node_id = -1;
    std::string host;
    int32_t port = 0;
  };
  // The active controller as the view has it, unless it is this broker.
  std::optional<Target> Controller() const;
  std::shared_ptr<net::Client> ClientFor(const Target& target);
  asio::awaitable<void> CreateOnController(std::string topic);

  BrokerContext& ctx_;
  asio::any_io_executor executor_;
  std::function<bool()> is_active_controller_;
  std::function<std::optional<std::string>()> store_unreachable_;
  const std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::map<int32_t, std::pair<std::string, std::shared_ptr<net::Client>>> clients_;
  std::set<std::string> creating_;
};

}  // namespace strata::kafka
