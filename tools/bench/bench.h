#pragma once
// `strata bench produce|consume`: a load generator on librdkafka, so that
// benchmarks are not limited by the JVM client. Prints progress every second
// and a final summary (and optionally JSON) with throughput and latency
// percentiles.
#include <cstdint>
#include <string>
#include <vector>

namespace strata::bench {

struct ProduceOptions {
  std::string bootstrap = "127.0.0.1:9092";
  std::string topic = "strata-bench";
  int64_t records = 1000000;
  int32_t record_size = 1024;
  std::string acks = "1";
  std::string compression = "none";
  int64_t rate = 0;  // records/s; 0 = as fast as possible
  int32_t linger_ms = 5;
  int32_t batch_size = 1048576;
  std::string json_out;  // file to write the summary to
  // librdkafka properties applied after the defaults above: the file's, then --set's
  // (tools/bench/client_config.h).
  std::string command_config;
  std::vector<std::string> sets;
};

struct ConsumeOptions {
  std::string bootstrap = "127.0.0.1:9092";
  std::string topic = "strata-bench";
  int64_t records = 1000000;
  int32_t timeout_s = 60;
  std::string json_out;
  std::string command_config;  // as ProduceOptions'
  std::vector<std::string> sets;
};

struct MetadataScaleOptions {
  std::string etcd = "127.0.0.1:2379";
  std::string prefix = "/strata-scale";
  int32_t brokers = 1000;
  int32_t topics = 1000;
  int64_t partitions = 1000000;
  std::string json_out;
};

int RunProduce(const ProduceOptions& options);
// `strata bench metadata`: see tools/bench/metadata_scale.cc.
int RunMetadataScale(const MetadataScaleOptions& options);
int RunConsume(const ConsumeOptions& options);

}  // namespace strata::bench
