#pragma once
// ProduceToLeader: one Produce (acks=all) of records to a partition's
// leader, through kafka::PeerClients, for the balancer's internal producers
// (load samples, balancer decisions). Blocks its thread until answered.
#include <asio/any_io_executor.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "cluster/metadata_view.h"
#include "kafka/peer_clients.h"

namespace strata::balancer {

using kafka::PeerClients;

// Produces `records` (key, value) in one batch to partition `partition` of
// `topic` at its leader, acks=all, waiting at most `timeout`.
Status ProduceToLeader(PeerClients& peers, const std::string& topic, int32_t partition,
                       const std::vector<std::pair<std::string, std::string>>& records,
                       int64_t timestamp_ms, std::chrono::milliseconds timeout);

}  // namespace strata::balancer
