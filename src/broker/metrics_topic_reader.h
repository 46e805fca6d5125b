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
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>

#include "balancer/load_window.h"
#include "base/result.h"
#include "cluster/metadata_view.h"
#include "net/client.h"

namespace strata::broker {

class MetricsTopicReader {
 public:
  MetricsTopicReader(cluster::MetadataView& view, asio::any_io_executor executor);
  ~MetricsTopicReader();

  // Reads what is new into `window`, waiting at most `timeout`.
  Status Poll(balancer::LoadWindow& window, std::chrono::milliseconds timeout);
  // The next Poll starts again from the log start.
  void Reset() { next_offset_.clear(); }
  int64_t records_read() const { return records_read_; }
  int64_t records_skipped() const { return records_skipped_; }

 private:
  asio::awaitable<Status> PollAll(balancer::LoadWindow& window,
                                  std::chrono::steady_clock::time_point deadline);
  // One fetch of `partition` from its leader; false when nothing new came.
  asio::awaitable<Result<bool>> FetchOnce(int32_t partition, balancer::LoadWindow& window,
                                          std::chrono::steady_clock::time_point deadline);
  void Decode(ByteView records, balancer::LoadWindow& window, int64_t* next);
  net::Client* ClientFor(cluster::NodeId leader);

  cluster::MetadataView& view_;
  asio::any_io_executor executor_;
  std::map<int32_t, int64_t> next_offset_;
  std::map<cluster::NodeId, std::unique_ptr<net::Client>> clients_;
  int64_t records_read_ = 0;
  int64_t records_skipped_ = 0;
};

}  // namespace strata::broker
