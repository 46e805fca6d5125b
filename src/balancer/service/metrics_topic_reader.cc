#include "balancer/service/metrics_topic_reader.h"

#include <asio/co_spawn.hpp>
#include <asio/use_future.hpp>
#include <string>

#include "balancer/metrics_sample.h"
#include "balancer/service/logger.h"
#include "protocol/error_code.h"
#include "protocol/messages/fetch.h"
#include "protocol/record_batch.h"
#include "protocol/records.h"

namespace strata::balancer {

namespace {
constexpr int16_t kFetchVersion = 12;
constexpr int32_t kMaxBytes = 8 << 20;
}  // namespace

MetricsTopicReader::MetricsTopicReader(cluster::MetadataView& view, asio::any_io_executor executor,
                                       net::ClientSecurity security)
    : view_(view), peers_(view, std::move(executor), "strata-balancer", std::move(security)) {}

Status MetricsTopicReader::Poll(std::vector<balancer::MetricsSample>& out,
                                std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto done = asio::co_spawn(peers_.executor(), PollAll(out, deadline), asio::use_future);
  if (done.wait_until(deadline + std::chrono::seconds(5)) != std::future_status::ready) {
    return MakeError(Errc::kTimeout, "reading __strata_metrics timed out");
  }
  return done.get();
}

asio::awaitable<Status> MetricsTopicReader::PollAll(
    std::vector<balancer::MetricsSample>& out, std::chrono::steady_clock::time_point deadline) {
  auto topic = view_.Topic(balancer::kMetricsTopic);
  if (!topic) co_return MakeError(Errc::kNotFound, "no topic __strata_metrics yet");
  for (int32_t p = 0; p < topic->record.partitions; ++p) {
    // Until a fetch brings nothing new (or the time is up).
    for (int round = 0; round < 1000 && std::chrono::steady_clock::now() < deadline; ++round) {
      auto more = co_await FetchOnce(p, out, deadline);
      if (!more.ok()) co_return more.take_error();
      if (!*more) break;
    }
  }
  co_return Status::Ok();
}

asio::awaitable<Result<bool>> MetricsTopicReader::FetchOnce(
    int32_t partition, std::vector<balancer::MetricsSample>& out,
    std::chrono::steady_clock::time_point deadline) {
  auto topic = view_.Topic(balancer::kMetricsTopic);
  if (!topic) co_return false;
  auto record = view_.Partition(cluster::UuidToBase64(topic->record.id), partition);
  if (!record || record->record.leader.value() < 0) {
    co_return MakeError(Errc::kUnavailable, "__strata_metrics has no leader");
  }
  net::Client* client = peers_.For(record->record.leader);
  if (client == nullptr) co_return MakeError(Errc::kUnavailable, "leader not registered");
  int64_t& next = next_offset_.try_emplace(partition, 0).first->second;
  protocol::FetchRequest req;
  req.max_bytes = kMaxBytes;
  req.topics.push_back({balancer::kMetricsTopic, {}});
  protocol::FetchRequest::Partition fp;
  fp.partition = partition;
  fp.fetch_offset = next;
  fp.partition_max_bytes = kMaxBytes;
  req.topics.back().partitions.push_back(fp);
  Bytes body;
  protocol::Encode(req, kFetchVersion, /*flexible=*/true, body);
  auto response = co_await client->Call(protocol::FetchRequest::kApiKey, kFetchVersion,
                                        std::move(body), deadline);
  if (!response.ok()) co_return response.take_error();
  auto decoded = protocol::Decode<protocol::FetchResponse>(response->body(), kFetchVersion, true);
  if (!decoded.ok()) co_return decoded.take_error();
  for (auto& t : decoded->responses) {
    for (auto& p : t.partitions) {
      if (p.error_code == protocol::Code(protocol::ErrorCode::kOffsetOutOfRange) &&
          p.log_start_offset > next) {
        next = p.log_start_offset;  // retention passed it: from the start
        co_return true;
      }
      if (p.error_code != 0) {
        co_return MakeError(Errc::kUnavailable, "fetching __strata_metrics: error code " +
                                                    std::to_string(p.error_code));
      }
      const int64_t before = next;
      if (!p.records.null) Decode(p.records.view, out, &next);
      co_return next > before;
    }
  }
  co_return false;
}

// Every record of every whole batch in `records`, decoded into `out`;
// `next` moves past each batch.
void MetricsTopicReader::Decode(ByteView records, std::vector<balancer::MetricsSample>& out,
                                int64_t* next) {
  Bytes scratch;
  protocol::Record record;
  while (records.size() >= protocol::kBatchHeaderSize) {
    auto header = protocol::ParseBatchHeader(records);
    if (!header.ok()) return;
    const int64_t size = header->size_in_bytes();
    if (size > static_cast<int64_t>(records.size())) return;  // a partial batch at the end
    const ByteView batch = records.subspan(0, static_cast<size_t>(size));
    records = records.subspan(static_cast<size_t>(size));
    const Offset from(*next);
    if (header->last_offset() < from) continue;
    *next = (header->last_offset() + 1).value();
    auto section = protocol::RecordsSection(*header, batch, 64 << 20, scratch);
    if (!section.ok()) {
      records_skipped_ += header->records_count;
      continue;
    }
    protocol::RecordParser parser(*section);
    for (int32_t i = 0; i < header->records_count && parser.Next(record).ok(); ++i) {
      if (header->base_offset + record.offset_delta < from || !record.value) continue;
      std::string value(reinterpret_cast<const char*>(record.value->data()), record.value->size());
      auto sample = balancer::DecodeMetricsSample(value);
      if (!sample.ok()) {
        if (records_skipped_++ % 100 == 0) {
          Log()->warn("__strata_metrics: skipping a record: {}", sample.error().message);
        }
        continue;
      }
      records_read_++;
      out.push_back(std::move(sample).value());
    }
  }
}

}  // namespace strata::balancer
