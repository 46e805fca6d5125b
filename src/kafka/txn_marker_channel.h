#pragma once
// TxnMarkerChannel: ends the transactions the coordinator here is committing
// or aborting. For each, it has the leader of every partition in the
// transaction append the COMMIT or ABORT marker (WriteTxnMarkers, sent to
// this broker too, as Kafka's TransactionMarkerChannelManager does), retrying
// a partition whose leader failed or moved, then writes the transaction's
// end (CompleteCommit/CompleteAbort) to __transaction_state. Until then the
// id's producer is answered CONCURRENT_TRANSACTIONS and retries.
//
// Markers for one broker go in one request at a time; those of
// transactions ending meanwhile queue and share the next request, so a busy
// coordinator sends each leader few, larger WriteTxnMarkers.
//
// A transaction is given up (left to the coordinator that loads it next)
// when its partition of __transaction_state is no longer loaded here, or a
// leader says a newer coordinator or producer epoch has written to it.
//
// Thread-safety: Complete may be called from any thread; the work runs on
// `executor`, which must be a single thread (io's).
#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <asio/steady_timer.hpp>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "coordinator/txn_coordinator.h"
#include "kafka/broker_context.h"
#include "kafka/cluster_state.h"
#include "kafka/peer_clients.h"
#include "protocol/messages/write_txn_markers.h"

namespace strata::kafka {

// The answers one round of a transaction waits for, one per leader.
struct MarkerFanout {
  explicit MarkerFanout(const asio::any_io_executor& ex) : done(ex) {
    done.expires_at(asio::steady_timer::time_point::max());
  }
  asio::steady_timer done;  // cancelled when the last answer is in
  size_t left = 0;
  bool give_up = false;
};

// One transaction's markers for one leader, and where its answer goes.
struct MarkerSend {
  std::string id;  // transactional id
  protocol::WriteTxnMarkersRequest::Marker marker;
  coordinator::TxnMarkers sent;
  int32_t coordinator_epoch = -1;
  std::shared_ptr<MarkerFanout> fanout;
};

class TxnMarkerChannel {
 public:
  TxnMarkerChannel(BrokerContext& ctx, coordinator::TxnCoordinator& coordinator,
                   cluster::MetadataView& view, asio::any_io_executor executor);
  ~TxnMarkerChannel();
  TxnMarkerChannel(const TxnMarkerChannel&) = delete;
  TxnMarkerChannel& operator=(const TxnMarkerChannel&) = delete;

  // Writes the markers and the end of `transactional_id`'s transaction if it
  // is being committed or aborted; a no-op while that is already under way.
  void Complete(const std::string& transactional_id);

  // Transactions whose markers are being written now (a metric).
  size_t in_flight() const { return in_flight_.load(); }
  // WriteTxnMarkers requests sent, and the transactions' markers they held.
  uint64_t requests_sent() const { return requests_sent_.load(); }
  uint64_t markers_sent() const { return markers_sent_.load(); }

 private:
  asio::awaitable<void> Run(std::string transactional_id);
  // One round: every remaining marker sent to its partition's leader. False
  // when the transaction must be given up.
  asio::awaitable<bool> SendMarkers(const std::string& transactional_id,
                                    const coordinator::TxnMarkers& markers,
                                    int32_t coordinator_epoch);

  // Markers waiting for a broker, and its requests in flight.
  struct BrokerQueue {
    LiveBroker broker;
    std::deque<MarkerSend> waiting;
    int in_flight = 0;
  };
  void Enqueue(const LiveBroker& broker, MarkerSend send);
  // Sends what waits for `node`, a request at a time, until nothing does.
  asio::awaitable<void> SendQueued(int32_t node);

  BrokerContext& ctx_;
  coordinator::TxnCoordinator& coordinator_;
  asio::any_io_executor executor_;
  PeerClients peers_;                      // used on executor_ only
  std::set<std::string> running_;          // likewise
  std::map<int32_t, BrokerQueue> queues_;  // by node; likewise
  // Ids asked for again while running (a reload): their run looks once more
  // before it stops. On executor_ only.
  std::set<std::string> asked_again_;
  std::atomic<size_t> in_flight_{0};
  std::atomic<uint64_t> requests_sent_{0};
  std::atomic<uint64_t> markers_sent_{0};
};

}  // namespace strata::kafka
