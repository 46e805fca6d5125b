#include "balancer/metrics_sample.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cluster/json_fields.h"

namespace strata::balancer {

namespace {

using nlohmann::json;
using namespace cluster::json_fields;

json TotalsToJson(const BrokerTotals& t) {
  return {{"cpu_cores_used", t.cpu_cores_used},
          {"network_in_bytes_per_sec", t.network_in_bytes_per_sec},
          {"network_out_bytes_per_sec", t.network_out_bytes_per_sec},
          {"disk_used_bytes", t.disk_used_bytes},
          {"disk_capacity_bytes", t.disk_capacity_bytes}};
}

json PartitionToJson(const PartitionSample& p) {
  return {{"topic", p.topic},
          {"partition", p.partition},
          {"leader", p.leader},
          {"bytes_in_per_sec", p.bytes_in_per_sec},
          {"bytes_out_per_sec", p.bytes_out_per_sec},
          {"replication_bytes_in_per_sec", p.replication_bytes_in_per_sec},
          {"replication_bytes_out_per_sec", p.replication_bytes_out_per_sec},
          {"messages_in_per_sec", p.messages_in_per_sec},
          {"size_bytes", p.size_bytes}};
}

// A rate: a JSON number, finite and not negative.
double Rate(const json& doc, const char* field) {
  const json& v = doc.at(field);
  if (!v.is_number()) throw std::invalid_argument(std::string("'") + field + "' is not a number");
  const double d = v.get<double>();
  if (!(d >= 0)) throw std::invalid_argument(std::string("'") + field + "' is negative");
  return d;
}

BrokerTotals TotalsFrom(const json& t) {
  BrokerTotals out;
  out.cpu_cores_used = Rate(t, "cpu_cores_used");
  out.network_in_bytes_per_sec = Rate(t, "network_in_bytes_per_sec");
  out.network_out_bytes_per_sec = Rate(t, "network_out_bytes_per_sec");
  out.disk_used_bytes = Field<int64_t>(t, "disk_used_bytes");
  out.disk_capacity_bytes = Field<int64_t>(t, "disk_capacity_bytes");
  return out;
}

PartitionSample PartitionFrom(const json& p) {
  PartitionSample out;
  out.topic = Field<std::string>(p, "topic");
  out.partition = Field<int32_t>(p, "partition");
  out.leader = Field<bool>(p, "leader");
  out.bytes_in_per_sec = Rate(p, "bytes_in_per_sec");
  out.bytes_out_per_sec = Rate(p, "bytes_out_per_sec");
  out.replication_bytes_in_per_sec = Rate(p, "replication_bytes_in_per_sec");
  out.replication_bytes_out_per_sec = Rate(p, "replication_bytes_out_per_sec");
  out.messages_in_per_sec = Rate(p, "messages_in_per_sec");
  out.size_bytes = Field<int64_t>(p, "size_bytes");
  return out;
}

}  // namespace

std::string MetricsRecordKey(cluster::NodeId broker) { return std::to_string(broker.value()); }

std::vector<std::string> EncodeMetricsSample(const MetricsSample& sample) {
  const size_t n = sample.partitions.size();
  const size_t parts = std::max<size_t>(1, (n + kPartitionsPerRecord - 1) / kPartitionsPerRecord);
  std::vector<std::string> out;
  for (size_t part = 0; part < parts; ++part) {
    json partitions = json::array();
    const size_t end = std::min(n, (part + 1) * kPartitionsPerRecord);
    for (size_t i = part * kPartitionsPerRecord; i < end; ++i) {
      partitions.push_back(PartitionToJson(sample.partitions[i]));
    }
    json doc = {{"version", MetricsSample::kVersion},    {"broker", sample.broker.value()},
                {"timestamp_ms", sample.timestamp_ms},   {"window_ms", sample.window_ms},
                {"part", static_cast<int32_t>(part)},    {"parts", static_cast<int32_t>(parts)},
                {"totals", TotalsToJson(sample.totals)}, {"partitions", std::move(partitions)}};
    out.push_back(doc.dump());
  }
  return out;
}

Result<MetricsSample> DecodeMetricsSample(const std::string& value) {
  return Decode<MetricsSample>(
      "metrics sample", value, [](const json& doc) -> Result<MetricsSample> {
        const int version = Field<int>(doc, "version");
        if (version != MetricsSample::kVersion) {
          return MakeError(Errc::kCorrupt,
                           "metrics sample: unknown version " + std::to_string(version));
        }
        MetricsSample s;
        s.broker = cluster::NodeId(Field<int32_t>(doc, "broker"));
        s.timestamp_ms = Field<int64_t>(doc, "timestamp_ms");
        s.window_ms = Field<int64_t>(doc, "window_ms");
        s.part = Field<int32_t>(doc, "part");
        s.parts = Field<int32_t>(doc, "parts");
        if (s.parts < 1 || s.part < 0 || s.part >= s.parts) {
          return MakeError(Errc::kCorrupt, "metrics sample: part " + std::to_string(s.part) +
                                               " of " + std::to_string(s.parts));
        }
        if (s.window_ms <= 0) return MakeError(Errc::kCorrupt, "metrics sample: window_ms <= 0");
        s.totals = TotalsFrom(Object(doc, "totals"));
        for (const json& p : Array(doc, "partitions")) s.partitions.push_back(PartitionFrom(p));
        return s;
      });
}

}  // namespace strata::balancer
