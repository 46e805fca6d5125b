#include "kafka/handlers/fetch_remote.h"

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>
#include <memory>

#include "broker/topic_manager.h"
#include "protocol/error_code.h"
#include "tiered/remote_log_manager.h"

namespace strata::kafka {

namespace {

using protocol::ErrorCode;
using protocol::FetchResponse;

// Reserves what the remote reads may return within
// strata.remote.fetch.max.bytes, waiting (suspended, in short steps) while
// other fetches' reads hold it. Returns the bytes reserved.
asio::awaitable<uint64_t> ReserveRemoteReadBytes(tiered::RemoteLogManager* rlm,
                                                 const std::vector<RemoteRead>& reads) {
  uint64_t want = 0;
  for (const RemoteRead& r : reads) want += uint64_t(std::max(r.max_bytes, 0));
  tiered::ReadBudget& budget = rlm->read_budget();
  const uint64_t grant = budget.Grant(want);
  if (budget.TryAcquire(grant)) co_return grant;
  budget.CountWait();
  asio::steady_timer timer(co_await asio::this_coro::executor);
  do {
    timer.expires_after(std::chrono::milliseconds(5));
    co_await timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  } while (!budget.TryAcquire(grant));
  co_return grant;
}

// Runs the remote reads on the reader pool, all partitions at once, and
// resumes when every one has answered. Completions are posted back to this
// coroutine's strand, so `left` needs no lock; the timer is only a wake-up.
asio::awaitable<void> RunRemoteReads(tiered::RemoteLogManager* rlm,
                                     std::vector<RemoteRead>& reads) {
  const uint64_t reserved = co_await ReserveRemoteReadBytes(rlm, reads);
  struct Pending {
    explicit Pending(asio::any_io_executor e, size_t n) : timer(e), left(n) {}
    asio::steady_timer timer;
    size_t left;
    std::vector<Result<tiered::RemoteRange>> results;
    std::vector<std::vector<storage::AbortedTxn>> aborted;
  };
  auto executor = co_await asio::this_coro::executor;
  auto pending = std::make_shared<Pending>(executor, reads.size());
  pending->results.resize(reads.size(), tiered::RemoteRange{});
  pending->aborted.resize(reads.size());
  pending->timer.expires_at(asio::steady_timer::time_point::max());
  for (size_t i = 0; i < reads.size(); ++i) {
    asio::post(rlm->reader_pool(),
               [rlm, pending, executor, i, tp = *reads[i].tp, offset = reads[i].offset,
                max = reads[i].max_bytes, committed = reads[i].read_committed,
                end = reads[i].readable_end] {
                 pending->results[i] = rlm->ReadRange(tp, offset, max, end);
                 if (pending->results[i].ok() && committed) {
                   // Records without the aborted transactions they hold would show a
                   // read_committed consumer aborted data: then none.
                   auto aborted = rlm->AbortedTransactions(tp, offset, end);
                   if (aborted.ok()) {
                     pending->aborted[i] = std::move(aborted).value();
                   } else {
                     pending->results[i] = aborted.take_error();
                   }
                 }
                 asio::post(executor, [pending] {
                   if (--pending->left == 0) pending->timer.cancel();
                 });
               });
  }
  while (pending->left > 0) {
    co_await pending->timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  }
  rlm->read_budget().Release(reserved);
  for (size_t i = 0; i < reads.size(); ++i) {
    reads[i].result = std::move(pending->results[i]);
    reads[i].aborted = std::move(pending->aborted[i]);
  }
}

// Adds `aborted` to a response's list, once each: a segment held both
// remote and local (not yet deleted locally) is reported by both.
void AddAborted(const std::vector<storage::AbortedTxn>& aborted,
                std::vector<FetchResponse::AbortedTransaction>& out) {
  for (const storage::AbortedTxn& txn : aborted) {
    const FetchResponse::AbortedTransaction entry{txn.producer_id, txn.first_offset.value()};
    if (std::find(out.begin(), out.end(), entry) == out.end()) out.push_back(entry);
  }
}

}  // namespace

asio::awaitable<void> ReadRemote(BrokerContext& ctx, std::vector<RemoteRead>& reads,
                                 protocol::FetchResponse& resp, ReadTally& tally) {
  co_await RunRemoteReads(ctx.topics.remote(), reads);
  for (RemoteRead& r : reads) {
    tally.bytes -= r.max_bytes;
    auto& out = resp.responses[r.topic_index].partitions[r.partition_index];
    if (!r.result.ok()) {
      // Retention removed it meanwhile: out of range (a consumer of a
      // follower goes back to the leader); a store outage (or an open
      // breaker): KAFKA_STORAGE_ERROR, which clients retry.
      out.error_code =
          Code(r.result.error().code == Errc::kNotFound ? ErrorCode::kOffsetOutOfRange
                                                        : ErrorCode::kKafkaStorageError);
      tally.answer_now = true;
      continue;
    }
    if (r.read_committed && out.aborted_transactions)
      AddAborted(r.aborted, *out.aborted_transactions);
    const auto n = static_cast<int64_t>(r.result->size());
    tally.bytes += n;
    if (r.as_follower) tally.follower_bytes += n;
    for (FileRegion& region : std::move(r.result).value().TakeRegions()) {
      out.records.Send(std::move(region));
    }
  }
}


}  // namespace strata::kafka
