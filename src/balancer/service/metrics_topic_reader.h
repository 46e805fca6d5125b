#pragma once
// MetricsTopicReader: the active controller's consumer of
// `__strata_metrics`. It fetches each partition of the topic from its
// leader, as any Kafka consumer would (Fetch over the broker's outbound
// client), from the log start on its first poll (a new controller term
// rebuilds its load window from what the topic keeps) and from where it
// stopped afterwards, and feeds every sample it decodes to a LoadWindow.
// A record that does not decode is counted and skipped.
//
// Thread-safety: one caller at a time (the balancer's thread); the calls
// run on the broker's io executor and Poll waits for them.
#include <asio/any_io_executor.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "balancer/load_window.h"
#include "balancer/service/produce_to_leader.h"
#include "base/result.h"
#include "cluster/metadata_view.h"

namespace strata::balancer {

class MetricsTopicReader {
 public:
  MetricsTopicReader(cluster::MetadataView& view, asio::any_io_executor executor,
                     net::ClientSecurity security = {});

  // Reads what is new, appending each sample's records to `out`, waiting
  // at most `timeout`. No lock is needed by the caller: the caller adds
  // them to its window afterwards (and must never hold a lock the io
  // thread may wait for while this waits on the io thread).
  Status Poll(std::vector<balancer::MetricsSample>& out, std::chrono::milliseconds timeout);
  // The next Poll starts again from the log start.
  void Reset() { next_offset_.clear(); }
  int64_t records_read() const { return records_read_.load(); }
  int64_t records_skipped() const { return records_skipped_.load(); }

 private:
  asio::awaitable<Status> PollAll(std::vector<balancer::MetricsSample>& out,
                                  std::chrono::steady_clock::time_point deadline);
  // One fetch of `partition` from its leader; false when nothing new came.
  asio::awaitable<Result<bool>> FetchOnce(int32_t partition,
                                          std::vector<balancer::MetricsSample>& out,
                                          std::chrono::steady_clock::time_point deadline);
  void Decode(ByteView records, std::vector<balancer::MetricsSample>& out, int64_t* next);
  cluster::MetadataView& view_;
  PeerClients peers_;
  std::map<int32_t, int64_t> next_offset_;
  std::atomic<int64_t> records_read_{0};
  std::atomic<int64_t> records_skipped_{0};
};

}  // namespace strata::balancer
